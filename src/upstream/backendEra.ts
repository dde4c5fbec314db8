// BackendEra: which protocol a backend speaks, found out and kept current (upstream.protocol).
// `legacy` and `modern` are taken as configured; `auto` (the default) probes: a server/discover
// answered with 2026-07-28 among its supportedVersions is a modern backend (a dual-era server
// included: 2026-07-28 is preferred), anything else MCP-shaped falls back to the session protocol
// (initialize). A backend that cannot be reached leaves the era unknown, and the next request
// probes again. recheck() probes again when a backend answered in a way that says its era may
// have changed (a modern backend's 400/404 without a modern error, a legacy backend refusing
// sessions): at most once per second after an answered probe, concurrent callers sharing one. Every finding and
// change is logged (`backend.era`) and told to `onChange`. A stdio backend is legacy.

import type { Logger } from "pino";
import { ErrorCode, RpcError } from "../protocol/errors.js";
import { type JsonObject, META, PROTOCOL_VERSION } from "../protocol/wire.js";
import { isObject } from "../util/json.js";
import type { ModernLink, ModernMessage } from "./modernLink.js";
import { UpstreamFailure } from "./upstreamFailure.js";

export type Era = "legacy" | "modern";
export type EraSetting = "auto" | Era;

export interface EraFinding {
  era: Era;
  /** How it was found: configured, or what the probe saw. */
  how: string;
  /** The backend's own discover result (modern backends). */
  discover?: JsonObject;
}

export interface BackendEraOptions {
  setting: EraSetting;
  /** Absent for a stdio backend: always legacy. */
  link?: ModernLink;
  /** Headers of taskgate's own probes (its static credentials). */
  headers: () => Record<string, string>;
  log: Logger;
  onChange?: (era: Era, previous: Era | undefined) => void;
}

const RECHECK_EVERY_MS = 1_000;
const CLIENT_INFO = { name: "taskgate", version: "0.1.0" };

export class BackendEra {
  private found: EraFinding | undefined;
  private probing: Promise<EraFinding> | undefined;
  private lastProbe = 0;

  constructor(private readonly options: BackendEraOptions) {}

  /** What is known now (undefined: not probed yet, or the backend was unreachable). */
  get current(): EraFinding | undefined {
    return this.found;
  }

  /** The era, probing first when it is not known yet (with `headers`: a caller's credentials, when the
   *  backend checks callers' own tokens and would refuse taskgate's). */
  async resolve(headers?: Record<string, string>): Promise<EraFinding> {
    if (this.found) return this.found;
    try {
      return await this.probe("first use", headers);
    } catch (error) {
      // A probe already under way with taskgate's own credentials was refused: probe with the caller's.
      if (!headers || !(error instanceof UpstreamFailure) || error.reason !== "upstream_auth") throw error;
      return this.found ?? this.run("first use, with the caller's credentials", headers);
    }
  }

  /** Probes now (readiness checks): the finding, or the failure to reach the backend. */
  probeNow(why: string): Promise<EraFinding> {
    return this.probe(why);
  }

  /** Probes again (throttled) after an answer that says the era may have changed; the finding after it. */
  async recheck(why: string): Promise<EraFinding | undefined> {
    if (this.options.setting === "legacy" || !this.options.link) return this.found;
    if (this.probing) return this.probing.catch(() => this.found);
    if (Date.now() - this.lastProbe < RECHECK_EVERY_MS) return this.found;
    return this.probe(why).catch(() => this.found);
  }

  private probe(why: string, headers?: Record<string, string>): Promise<EraFinding> {
    // Only an answered probe holds the next one back: while the backend is down, each hint probes again.
    this.probing ??= this.run(why, headers)
      .then((finding) => {
        this.lastProbe = Date.now();
        return finding;
      })
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }

  private async run(why: string, headers?: Record<string, string>): Promise<EraFinding> {
    const { setting, link } = this.options;
    const finding: EraFinding =
      !link || setting === "legacy"
        ? { era: "legacy", how: link ? "configured (upstream.protocol: legacy)" : "a stdio backend speaks the session protocol" }
        : await this.discover(link, setting, headers ?? this.options.headers());
    const previous = this.found;
    this.found = finding;
    if (previous?.era !== finding.era || previous === undefined) {
      this.options.log.info(
        { event: "backend.era", era: finding.era, previous: previous?.era, how: finding.how, why },
        previous
          ? `backend moved from ${previous.era} to ${finding.era}`
          : `backend speaks ${finding.era === "modern" ? "2026-07-28" : "the session protocol"}`,
      );
      this.options.onChange?.(finding.era, previous?.era);
    }
    return finding;
  }

  private async discover(link: ModernLink, setting: EraSetting, headers: Record<string, string>): Promise<EraFinding> {
    let answer: ModernMessage;
    try {
      answer = await link.send({
        id: link.nextId(),
        method: "server/discover",
        params: {
          _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {}, [META.clientInfo]: CLIENT_INFO },
        },
        headers,
        untraced: true, // readiness probes repeat: no trace of their own
      });
    } catch (error) {
      // Not MCP-shaped to a sessionless POST: a legacy server may still answer initialize.
      if (setting === "auto" && error instanceof UpstreamFailure && error.reason === "upstream_not_mcp") {
        return { era: "legacy", how: `server/discover: ${error.message}; initialize instead` };
      }
      throw error;
    }
    const { message } = answer;
    const result = isObject(message.result) ? message.result : undefined;
    const versions = Array.isArray(result?.supportedVersions) ? result.supportedVersions : [];
    if (result && versions.includes(PROTOCOL_VERSION)) {
      return { era: "modern", how: `server/discover: ${versions.join(", ")}`, discover: result };
    }
    if (setting === "modern") {
      const said = isObject(message.error) ? String(message.error.message) : `supportedVersions ${versions.join(", ") || "none"}`;
      return { era: "modern", how: `configured (upstream.protocol: modern); server/discover answered: ${said.slice(0, 120)}` };
    }
    const said = isObject(message.error) ? `error ${String(message.error.code)}` : `supportedVersions ${versions.join(", ") || "none"}`;
    return { era: "legacy", how: `server/discover answered ${said}: initialize instead` };
  }
}

/** A modern backend's answer that says it may no longer be one (a legacy server refusing a sessionless request). */
export function soundsLegacy(httpStatus: number, error: unknown): boolean {
  if (httpStatus !== 400 && httpStatus !== 404) return false;
  const code = isObject(error) ? error.code : undefined;
  // -32020…-32022 and -32601/-32602 are what a 2026-07-28 server answers; -32000 is a legacy SDK's "no session".
  return code === undefined || code === -32000;
}

/** Reasons and codes after which the era is probed again. */
const ERA_HINT_REASONS = new Set(["upstream_not_mcp", "upstream_unreachable", "session_gone", "upstream_lost", "upstream_era_changed"]);
const ERA_HINT_CODES = new Set<number>([ErrorCode.UnsupportedProtocolVersion, -32000]);

export function mayMeanEraChange(error: unknown): boolean {
  if (!(error instanceof RpcError)) return false;
  const reason = isObject(error.data) ? error.data.reason : undefined;
  return (typeof reason === "string" && ERA_HINT_REASONS.has(reason)) || ERA_HINT_CODES.has(error.code);
}
