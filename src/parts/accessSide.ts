// The access side of an instance: the audit trail (log, and audit.file), the approvals kept on task
// records (listed and decided from any instance sharing the store), and how a caller is named to
// approvers and in audit lines. One per instance; each upstream's rules sit in its BackendPart
// (UpstreamAccess), made from this side and its own access/approvals blocks.
// Approval writes are told to the instance's transitions like any task write: the notifier hears
// of a new approval from the instance that asked for it.

import type { Logger } from "pino";
import { Approvals } from "../access/approvals.js";
import { AuditTrail } from "../access/auditTrail.js";
import { UpstreamAccess } from "../access/upstreamAccess.js";
import { type Identity, loggableSubject } from "../auth/identity.js";
import type { UpstreamPolicy } from "../config/accessOptions.js";
import type { Config } from "../config/schema.js";
import { TaskRecords } from "../tasks/taskRecords.js";
import type { ClusterSide } from "./clusterSide.js";

export interface AccessSide {
  approvals: Approvals;
  audit: AuditTrail;
  shown(identity: Identity): string;
  /** The access parts of one upstream (`backend`: its name in a fleet). */
  forUpstream(policy: UpstreamPolicy, backend?: string): UpstreamAccess;
}

export function openAccessSide(config: Pick<Config, "audit" | "auth">, cluster: ClusterSide, log: Logger): AccessSide {
  const audit = new AuditTrail(config.audit, log);
  const approvals = new Approvals(
    new TaskRecords(cluster.store, cluster.cluster.bus, undefined, cluster.transitions),
    cluster.cluster.bus,
    cluster.store,
  );
  const shown = (identity: Identity) => loggableSubject(identity, config.auth.mode);
  const auditAllCalls = config.audit.file !== undefined;
  return {
    approvals,
    audit,
    shown,
    forUpstream: (policy, backend) => new UpstreamAccess(policy, { approvals, audit, shown, backend, auditAllCalls }),
  };
}
