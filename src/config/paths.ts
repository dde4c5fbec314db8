// Small helpers over raw (not yet validated) configuration data: option paths as people write
// them (`auth.tokens[0].sha256`), reading and setting by path, and quoting values in messages.

export type Segment = string | number;
export type Raw = Record<string, unknown>;

export function isPlainObject(value: unknown): value is Raw {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function valueAt(root: unknown, path: readonly Segment[]): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[String(segment)];
  }
  return node;
}

/** Sets `value` at `path`, creating the objects on the way. */
export function setPath(target: Raw, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    node = isPlainObject(next) ? next : (node[key] = {});
  }
  node[path[path.length - 1] as string] = value;
}

export function formatPath(path: readonly Segment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** The key provenance is recorded under: the path as formatted for people. */
export const pathKey = (path: readonly Segment[]) => formatPath(path);

export function quote(text: string): string {
  const short = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return JSON.stringify(short);
}

export function typeName(value: unknown): string {
  return Array.isArray(value) ? "a list" : typeof value === "string" ? "a string" : typeof value;
}
