// Recognises the environment variables Kubernetes injects for every Service in the namespace
// ("service links"), so they are never mistaken for taskgate options. A Service named `taskgate`
// (or `taskgate-redis`, …) gives every pod TASKGATE_SERVICE_HOST, TASKGATE_SERVICE_PORT[_<name>],
// TASKGATE_PORT=tcp://10.96.0.12:3000, TASKGATE_PORT_3000_TCP[_PROTO|_PORT|_ADDR]. The names are
// fixed by Kubernetes; only TASKGATE_PORT collides with an option, and there the value tells them
// apart: a service link is always `<proto>://<address>:<port>`, a real port a bare number.

const PROTO = "(?:TCP|UDP|SCTP)";
/** `TASKGATE` plus the rest of the Service name, upper-cased, dashes as underscores. */
const SERVICE = "TASKGATE(?:_[A-Z0-9_]+?)?";

const NAME_SHAPES: ReadonlyArray<{ pattern: RegExp; shape: string }> = [
  { pattern: new RegExp(`^${SERVICE}_SERVICE_HOST$`), shape: "<SERVICE>_SERVICE_HOST" },
  { pattern: new RegExp(`^${SERVICE}_SERVICE_PORT(?:_[A-Z0-9_]+)?$`), shape: "<SERVICE>_SERVICE_PORT[_<port name>]" },
  { pattern: new RegExp(`^${SERVICE}_PORT_\\d+_${PROTO}$`), shape: "<SERVICE>_PORT_<port>_<PROTO>" },
  { pattern: new RegExp(`^${SERVICE}_PORT_\\d+_${PROTO}_(?:PROTO|PORT|ADDR)$`), shape: "<SERVICE>_PORT_<port>_<PROTO>_PROTO|PORT|ADDR" },
];
const PORT_NAME = new RegExp(`^${SERVICE}_PORT$`);
const LINK_VALUE = /^(?:tcp|udp|sctp):\/\/(?:\[[0-9A-Fa-f:.]+\]|[^\s:/[\]]+):\d+$/;

/**
 * The service-link shape `name` (with `value`) has, or undefined when it is not a service link.
 * A bare-number TASKGATE_PORT is not one: it is the port option.
 */
export function serviceLinkShape(name: string, value: string): string | undefined {
  for (const { pattern, shape } of NAME_SHAPES) if (pattern.test(name)) return shape;
  if (PORT_NAME.test(name) && LINK_VALUE.test(value.trim())) return "<SERVICE>_PORT=<proto>://<address>:<port>";
  return undefined;
}
