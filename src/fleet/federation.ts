// The federated endpoint: one 2026-07-28 endpoint over several backends. Contract:
//
// - server/discover: the union of the members' capabilities and their listChanged / subscribe flags
//   (each member asked as the caller).
// - tools/list, prompts/list, resources/list, resources/templates/list: every member's whole list
//   (all its pages), merged by mergeCatalog (prefixed names, collisions left out and logged and
//   counted, missing members left out); the answer names the members left out in
//   `_meta["io.taskgate/missingBackends"]`. A member that has not answered within listTimeoutMs is
//   missing from that answer.
// - tools/call, prompts/get: the backend is the text before the first separator (unambiguous, see
//   federatedNames.ts); the backend's own name is the rest when that is already a valid name, else
//   it is found in that backend's list alone. The request goes to that member's router with its own
//   name and this endpoint's path, so a task made here answers only here.
// - resources/read, completion/complete: routed by the URI (or the prompt name of a ref).
// - tasks/*, subscriptions/listen: by the task's record (it names its backend and endpoint), or, for
//   a modern backend's own task, by the backend its id names, never asking the other backends; a
//   listen stream here also carries every member's list changes, and each subscribed resource's
//   updates from the member that owns its URI (routed as resources/read is).

import type { Logger } from "pino";
import type { MethodHandler, MethodRequest } from "../methods/handler.js";
import { listenHandler } from "../methods/listen.js";
import { tasksHandlers } from "../methods/tasks.js";
import { ErrorCode, invalidParams, methodNotFound, RpcError } from "../protocol/errors.js";
import { federatedName } from "../protocol/federatedNames.js";
import { type Reply, resultReply } from "../protocol/reply.js";
import { type JsonObject, META, SUPPORTED_VERSIONS, TASKS_EXTENSION } from "../protocol/wire.js";
import type { Subscriptions } from "../subscriptions/subscriptions.js";
import { RelayedTaskIds } from "../tasks/relayedTaskIds.js";
import type { TaskAccess } from "../tasks/taskAccess.js";
import { isObject } from "../util/json.js";
import { type BackendListing, type CatalogKind, type MergedCatalog, mergeCatalog, routeResource } from "./federatedCatalog.js";
import { federatedListen } from "./federatedListen.js";

/** A backend as the federation sees it: its name and its router (which names its failures). */
export interface Member {
  name: string;
  dispatch(request: MethodRequest): Promise<Reply>;
}

export interface FederationOptions {
  path: string;
  separator: string;
  listTimeoutMs: number;
  cache: { ttlMs: number; cacheScope: "public" | "private" };
}

export interface FederationDeps {
  /** The members now, in order (a reload changes them). */
  members(): readonly Member[];
  access: TaskAccess;
  subscriptions: Subscriptions;
  log: Logger;
  /** Told of each collision and each member left out of an answer (metrics). */
  onCollision(kind: CatalogKind): void;
  onMissing(backend: string): void;
}

const LISTS: Record<string, { kind: CatalogKind; field: string }> = {
  "tools/list": { kind: "tools", field: "tools" },
  "prompts/list": { kind: "prompts", field: "prompts" },
  "resources/list": { kind: "resources", field: "resources" },
  "resources/templates/list": { kind: "resourceTemplates", field: "resourceTemplates" },
};

export const MISSING_BACKENDS = "io.taskgate/missingBackends";

/** A bound on how many pages one member's list may take. */
const MAX_PAGES = 100;

export class Federation {
  constructor(
    private readonly options: FederationOptions,
    private readonly deps: FederationDeps,
  ) {}

  /** The handlers of the federated endpoint (the router's gates come first). */
  handlers(): Record<string, MethodHandler> {
    const list = (request: MethodRequest) => this.list(request);
    return {
      "server/discover": (request) => this.discover(request),
      "tools/list": list,
      "prompts/list": list,
      "resources/list": list,
      "resources/templates/list": list,
      "tools/call": (request) => this.byName(request, "tools"),
      "prompts/get": (request) => this.byName(request, "prompts"),
      "resources/read": (request) => this.byUri(request),
      "completion/complete": (request) => this.completion(request),
      "subscriptions/listen": (request) => this.listen(request),
      ...this.tasks(),
    };
  }

  /** tasks/*: a modern backend's own task (its relayed id names the backend) goes to that member; taskgate's by record. */
  private tasks(): Record<string, MethodHandler> {
    const own = tasksHandlers(this.deps.access);
    const routed =
      (method: keyof typeof own): MethodHandler =>
      (request) => {
        const taskId = request.params.taskId;
        const name = typeof taskId === "string" ? RelayedTaskIds.backendOf(taskId) : undefined;
        const member = name ? this.deps.members().find((m) => m.name === name) : undefined;
        if (!member) return own[method](request);
        request.note.backend = member.name;
        return member.dispatch({ ...request, endpoint: this.options.path });
      };
    return { "tasks/get": routed("tasks/get"), "tasks/update": routed("tasks/update"), "tasks/cancel": routed("tasks/cancel") };
  }

  /** The router's capability gate lets every method through: each member's own router gates by
   *  its own server (a member without the capability lists nothing, and refuses a call -32601),
   *  so a call never waits for the other members. */
  static readonly capabilities = async (): Promise<JsonObject> => ({ tools: {}, prompts: {}, resources: {}, completions: {} });

  private async discover(request: MethodRequest): Promise<Reply> {
    return resultReply(await this.discoverResult(request));
  }

  private async discoverResult(request: MethodRequest): Promise<JsonObject> {
    const answers = await Promise.all(
      this.deps.members().map((member) => this.ask(member, { ...request, method: "server/discover", params: {} })),
    );
    const capabilities: JsonObject = {};
    for (const answer of answers) {
      if (!("result" in answer) || !isObject(answer.result.capabilities)) continue;
      for (const kind of ["tools", "prompts", "resources", "completions"]) {
        const theirs = answer.result.capabilities[kind];
        if (!theirs) continue;
        // A flag some member offers is offered here: the federated listen stream carries it from that member.
        const mine: JsonObject = isObject(capabilities[kind]) ? capabilities[kind] : {};
        for (const flag of ["listChanged", "subscribe"]) if (isObject(theirs) && theirs[flag] === true) mine[flag] = true;
        capabilities[kind] = mine;
      }
    }
    capabilities.extensions = { [TASKS_EXTENSION]: {} };
    return {
      resultType: "complete",
      supportedVersions: [...SUPPORTED_VERSIONS],
      capabilities,
      instructions: `One endpoint over the backends ${this.deps
        .members()
        .map((member) => member.name)
        .join(", ")}: tools and prompts are named <backend>${this.options.separator}<name>.`,
      ttlMs: 0,
      cacheScope: "private",
      _meta: { [META.serverInfo]: { name: "taskgate federation", version: "0.1.0" } },
    };
  }

  private async list(request: MethodRequest): Promise<Reply> {
    const what = LISTS[request.method];
    if (!what) throw methodNotFound(request.method);
    const merged = await this.merged(request, what.kind);
    return resultReply({
      [what.field]: merged.items,
      resultType: "complete",
      ttlMs: merged.missing.length > 0 ? 0 : this.options.cache.ttlMs,
      cacheScope: this.options.cache.cacheScope,
      ...(merged.missing.length > 0 ? { _meta: { [MISSING_BACKENDS]: merged.missing } } : {}),
    });
  }

  /** Every member's whole list of `kind`, merged; collisions and missing members logged and counted. */
  private async merged(request: MethodRequest, kind: CatalogKind, members = this.deps.members()): Promise<MergedCatalog> {
    const method = Object.entries(LISTS).find(([, what]) => what.kind === kind)?.[0] as string;
    const listings = await Promise.all(members.map((member) => this.listing(member, request, method, kind)));
    const merged = mergeCatalog(kind, listings, this.options.separator);
    for (const collision of merged.collisions) {
      this.deps.onCollision(kind);
      request.log.warn(
        { event: "federation.collision", ...collision },
        "two backends' entries would have the same name: the later one is left out",
      );
    }
    for (const missing of merged.missing) {
      this.deps.onMissing(missing.backend);
      request.log.warn({ event: "federation.backend_missing", kind, ...missing }, "a backend is left out of the federated list");
    }
    return merged;
  }

  /** One member's whole list (every page); a member without the capability lists nothing. */
  private async listing(member: Member, request: MethodRequest, method: string, kind: CatalogKind): Promise<BackendListing> {
    const field = LISTS[method]?.field ?? kind;
    const items: JsonObject[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await this.ask(member, { ...request, method, params: cursor ? { cursor } : {} });
      if ("error" in answer) {
        if (answer.error.code === ErrorCode.MethodNotFound) return { backend: member.name, items: [] };
        return { backend: member.name, missing: reasonOf(answer.error) };
      }
      const found = answer.result[field];
      if (Array.isArray(found)) items.push(...found.filter(isObject));
      cursor = typeof answer.result.nextCursor === "string" ? answer.result.nextCursor : undefined;
      if (!cursor) break;
    }
    return { backend: member.name, items };
  }

  /** A member's answer to a request, within listTimeoutMs: its result, or the error. */
  private async ask(member: Member, request: MethodRequest): Promise<{ result: JsonObject } | { error: RpcError }> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new RpcError(ErrorCode.InternalError, `no answer within ${this.options.listTimeoutMs} ms (federation.listTimeoutMs)`)),
        this.options.listTimeoutMs,
      );
    });
    try {
      const reply = await Promise.race([member.dispatch({ ...request, note: {} }), limit]);
      if (reply.kind === "result") return { result: reply.result };
      if (reply.kind === "error") return { error: reply.error };
      return { error: new RpcError(ErrorCode.InternalError, "answered with a stream") };
    } catch (error) {
      return { error: error instanceof RpcError ? error : new RpcError(ErrorCode.InternalError, String(error)) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** tools/call and prompts/get: to the member the prefix names, under the member's own name. */
  private async byName(request: MethodRequest, kind: "tools" | "prompts"): Promise<Reply> {
    const shown = request.params.name;
    const what = kind === "tools" ? "tool" : "prompt";
    if (typeof shown !== "string") throw invalidParams(`params.name must be the ${what}'s name`);
    const member = this.memberOf(shown);
    const own = member ? await this.ownName(member, request, kind, shown) : undefined;
    if (!member || own === undefined) throw invalidParams(`Unknown ${what}: ${shown}`);
    request.note.backend = member.name;
    return member.dispatch({ ...request, params: { ...request.params, name: own }, endpoint: this.options.path });
  }

  /** The member whose name is the text before the first separator. */
  private memberOf(shown: string): Member | undefined {
    const at = shown.indexOf(this.options.separator);
    if (at <= 0) return undefined;
    const name = shown.slice(0, at);
    return this.deps.members().find((member) => member.name === name);
  }

  /** The member's own name for a shown one: the rest, when it needed no rewriting; else looked up in that member's list. */
  private async ownName(member: Member, request: MethodRequest, kind: "tools" | "prompts", shown: string): Promise<string | undefined> {
    const rest = shown.slice(member.name.length + this.options.separator.length);
    const direct = federatedName(member.name, this.options.separator, rest);
    if (direct.rewritten === undefined && direct.name === shown) return rest;
    const merged = await this.merged(request, kind, [member]);
    return merged.routes.get(shown)?.key;
  }

  private async byUri(request: MethodRequest): Promise<Reply> {
    const { uri } = request.params;
    if (typeof uri !== "string") throw invalidParams("params.uri must be the resource's URI");
    const member = await this.memberOfUri(request, uri);
    if (!member) throw invalidParams(`Unknown resource: ${uri} (no backend lists it)`);
    request.note.backend = member.name;
    return member.dispatch({ ...request, endpoint: this.options.path });
  }

  private async memberOfUri(request: MethodRequest, uri: string): Promise<Member | undefined> {
    const [resources, templates] = await Promise.all([this.merged(request, "resources"), this.merged(request, "resourceTemplates")]);
    const route = routeResource(uri, resources, templates);
    return route ? this.deps.members().find((member) => member.name === route.backend) : undefined;
  }

  /** completion/complete: a prompt ref by its shown name, a resource ref by its URI. */
  private async completion(request: MethodRequest): Promise<Reply> {
    const ref = isObject(request.params.ref) ? request.params.ref : {};
    if (ref.type === "ref/prompt" && typeof ref.name === "string") {
      const member = this.memberOf(ref.name);
      const own = member ? await this.ownName(member, request, "prompts", ref.name) : undefined;
      if (!member || own === undefined) throw invalidParams(`Unknown prompt: ${ref.name}`);
      return member.dispatch({ ...request, params: { ...request.params, ref: { ...ref, name: own } }, endpoint: this.options.path });
    }
    const uri = typeof ref.uri === "string" ? ref.uri : undefined;
    const member = uri ? await this.memberOfUri(request, uri) : undefined;
    if (!member) throw invalidParams("params.ref must name a prompt (<backend><separator><name>) or a resource a backend lists");
    return member.dispatch({ ...request, endpoint: this.options.path });
  }

  /** One stream: tasks of any member, list changes of every member, resource subscriptions by owner (federatedListen.ts). */
  private listen(request: MethodRequest): Promise<Reply> {
    return federatedListen(
      request,
      listenHandler(this.deps.subscriptions),
      this.deps.members(),
      this.options.listTimeoutMs,
      (asking, uris) => this.ownersOf(asking, uris),
      async (asking) => {
        const { capabilities } = await this.discoverResult(asking);
        return isObject(capabilities) && isObject(capabilities.resources) && capabilities.resources.subscribe === true;
      },
    );
  }

  /** The member each URI goes to (as resources/read routes it), from one look at the merged lists. */
  private async ownersOf(request: MethodRequest, uris: readonly string[]): Promise<Map<string, string[]>> {
    const [resources, templates] = await Promise.all([this.merged(request, "resources"), this.merged(request, "resourceTemplates")]);
    const owners = new Map<string, string[]>();
    for (const uri of uris) {
      const route = routeResource(uri, resources, templates);
      if (route) owners.set(route.backend, [...(owners.get(route.backend) ?? []), uri]);
    }
    return owners;
  }
}

/** What a member's failure is called in `missingBackends`: its reason, else its message. */
function reasonOf(error: RpcError): string {
  const reason = isObject(error.data) ? error.data.reason : undefined;
  return typeof reason === "string" ? reason : error.message;
}
