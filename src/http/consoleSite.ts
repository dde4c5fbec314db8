// The web console's files: the page at /console, its assets at /console/<file> (the package's
// console/ folder, read once at start, plus eventsource-parser's ESM build from node_modules at
// /console/vendor/eventsource-parser.js) and /console/settings.json (what the page needs to offer a
// sign-in). The data comes from the task inventory API; nothing here reads a token. Every answer
// carries headers that keep the page to itself:
//   Content-Security-Policy  only its own scripts, styles and images (no inline code), fetches to its
//                            own origin plus the OAuth authorization servers when that sign-in is on,
//                            frame-ancestors 'none' (with X-Frame-Options DENY: no clickjacking);
//   Referrer-Policy          no-referrer (an authorization code in the page's URL goes nowhere);
//   nosniff, and no-cache (revalidated by ETag, so an upgrade is seen at once).
// No cookies are set or read: requests carry the bearer token in a header, so CSRF has nothing to ride on.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Express, Response } from "express";

/** What the page reads from /console/settings.json. */
export interface ConsoleSettings {
  /** auth.mode: "demo" (any name is a token), "tokens", "jwt", "none". */
  authMode: string;
  /** Path of the Protected Resource Metadata document (RFC 9728), when taskgate publishes one. */
  resourceMetadata?: string;
  /** The OAuth sign-in (jwt mode with console.oauthClientId): the client and the scopes it asks for. */
  oauth?: { clientId: string; scope: string };
}

export interface ConsoleSiteOptions {
  settings: ConsoleSettings;
  /** Origins the page may fetch from besides its own (the authorization servers of the OAuth sign-in). */
  connectOrigins: readonly string[];
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** The package root: the first folder above this module holding console/index.html (src/http/ or dist/src/http/). */
function consoleFolder(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const roots = [join(here, "..", ".."), join(here, "..", "..", "..")];
  const root = roots.find((dir) => existsSync(join(dir, "console", "index.html")));
  if (root === undefined) throw new Error(`the console's files (console/index.html) are not in ${roots.join(" or ")}`);
  return join(root, "console");
}

/** The served files by URL name: console/*.{js,css,svg} and the SSE parser's ESM build. */
function readAssets(): Map<string, { body: Buffer; type: string }> {
  const folder = consoleFolder();
  const assets = new Map<string, { body: Buffer; type: string }>();
  for (const name of readdirSync(folder)) {
    const type = TYPES[extname(name)];
    if (type !== undefined && name !== "index.html") assets.set(name, { body: readFileSync(join(folder, name)), type });
  }
  const parserPackage = createRequire(import.meta.url).resolve("eventsource-parser/package.json");
  const parser = readFileSync(join(dirname(parserPackage), "dist", "index.js"));
  assets.set("vendor/eventsource-parser.js", { body: parser, type: TYPES[".js"] as string });
  assets.set("index.html", { body: readFileSync(join(folder, "index.html")), type: TYPES[".html"] as string });
  return assets;
}

/** The policy: the page's own origin for everything it loads, nothing inline, never framed. */
export function consolePolicy(connectOrigins: readonly string[]): string {
  const connect = ["'self'", ...connectOrigins].join(" ");
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${connect}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function mountConsole(app: Express, options: ConsoleSiteOptions): void {
  const assets = readAssets();
  const policy = consolePolicy(options.connectOrigins);
  const settings = Buffer.from(JSON.stringify(options.settings));
  const send = (res: Response, body: Buffer, type: string) => {
    res.set({
      "Content-Type": type,
      "Content-Security-Policy": policy,
      "X-Frame-Options": "DENY",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "Cross-Origin-Opener-Policy": "same-origin",
      "Cache-Control": "no-cache",
    });
    res.send(body);
  };
  const page = assets.get("index.html") as { body: Buffer; type: string };
  app.get("/console", (_req, res) => send(res, page.body, page.type));
  // The page's relative links assume /console: the slash form is sent there (with its query: an OAuth redirect's code).
  app.get("/console/", (req, res) => {
    const query = req.originalUrl.indexOf("?");
    res.redirect(308, `../console${query === -1 ? "" : req.originalUrl.slice(query)}`);
  });
  app.get("/console/settings.json", (_req, res) => send(res, settings, "application/json"));
  app.get("/console/*file", (req, res) => {
    const name = (req.params as { file?: string[] }).file?.join("/") ?? "";
    const asset = name === "index.html" ? undefined : assets.get(name);
    if (asset === undefined) {
      res
        .status(404)
        .type("text/plain")
        .send(`no console file ${name.slice(0, 80)}`);
      return;
    }
    send(res, asset.body, asset.type);
  });
}
