// Types of /console/vendor/eventsource-parser.js, which taskgate serves from the eventsource-parser
// package's own ESM build (dist/index.js): the same module, so its own declarations describe it.
export * from "eventsource-parser";
