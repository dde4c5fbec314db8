// Access rules and approval rules, as pure functions of the configuration: deny wins over allow,
// the default decides what no rule names, roles match by subject, scope and claim (every selector
// given), globs as picomatch reads them; the first approvals entry that matches decides, argument
// patterns included.
// Run: node --import tsx --test test/unit/accessRules.test.ts

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AccessRules } from "../../src/access/accessRules.js";
import { ApprovalRules } from "../../src/access/approvalRules.js";
import { compileRole } from "../../src/access/roles.js";
import { AccessSchema, ApprovalsOption } from "../../src/config/accessOptions.js";

const alice = { subject: "alice", scopes: ["tools:call"], claims: { groups: ["ops", "dev"], level: 3 } };
const bob = { subject: "bob" };

describe("access rules", () => {
  it("deny wins over allow; the default decides what no rule names", () => {
    const rules = new AccessRules(
      AccessSchema.parse({
        default: "deny",
        rules: [
          { allow: { tools: ["greet", "deploy_*"] } },
          { subjects: ["bob"], deny: { tools: ["deploy_*"] } },
          { claims: { groups: ["ops"] }, allow: { resources: ["example://**"] } },
        ],
      }),
    );
    assert.equal(rules.allows(bob, "tools", "greet"), true);
    assert.equal(rules.allows(bob, "tools", "deploy_prod"), false, "deny wins");
    assert.equal(rules.allows(alice, "tools", "deploy_prod"), true);
    assert.equal(rules.allows(alice, "tools", "other"), false, "default deny");
    assert.equal(rules.allows(alice, "resources", "example://months/jan"), true, "** crosses the URI's slashes");
    assert.equal(rules.allows(bob, "resources", "example://months/jan"), false, "bob has no groups claim");
    assert.equal(rules.open, false);
    assert.equal(new AccessRules(AccessSchema.parse({})).open, true, "no rules, default allow: nothing to check");
  });

  it("a role needs every selector it gives; one pattern of each suffices", () => {
    assert.equal(compileRole({ subjects: ["a*"], scopes: ["tools:*"] }).matches(alice), true);
    assert.equal(compileRole({ subjects: ["a*"], scopes: ["admin"] }).matches(alice), false);
    assert.equal(compileRole({ claims: { level: ["3"] } }).matches(alice), true, "a number claim matches its text");
    assert.equal(compileRole({ claims: { groups: ["qa"] } }).matches(alice), false);
    assert.equal(compileRole({}).matches(bob), true, "no selector: everyone");
    assert.equal(compileRole({ scopes: ["deployers"], claims: { groups: ["ops"] } }).described, "scopes deployers; claim groups ops");
  });

  it("a rule needs allow or deny; patterns must not be empty", () => {
    assert.equal(AccessSchema.safeParse({ rules: [{ subjects: ["bob"] }] }).success, false);
    assert.equal(AccessSchema.safeParse({ rules: [{ deny: { tools: [""] } }] }).success, false);
  });
});

describe("approval rules", () => {
  const rules = new ApprovalRules(
    ApprovalsOption.parse([
      { tools: ["deploy"], arguments: { env: "prod*" }, approver: { scopes: ["deployers"] } },
      { tools: ["deploy", "confirm_*"], approver: "caller", expiresAfterMs: 1000 },
    ]),
  );

  it("the first entry whose tool and argument patterns match decides", () => {
    const prod = rules.needFor("deploy", { env: "production", version: 2 });
    assert.equal(prod?.rule, "approvals[0]");
    assert.notEqual(prod?.approver, "caller");
    assert.equal(prod?.expiresAfterMs, 3_600_000, "the default expiry");
    assert.equal(rules.needFor("deploy", { env: "staging" })?.approver, "caller");
    assert.equal(rules.needFor("deploy", {})?.rule, "approvals[1]", "an absent argument does not match");
    assert.equal(rules.needFor("confirm_delete", undefined)?.rule, "approvals[1]");
    assert.equal(rules.needFor("greet", {}), undefined);
  });

  it("a value that is not a string is matched as its JSON text", () => {
    const numbers = new ApprovalRules(ApprovalsOption.parse([{ tools: ["scale"], arguments: { replicas: "1?" }, approver: "caller" }]));
    assert.ok(numbers.needFor("scale", { replicas: 12 }));
    assert.equal(numbers.needFor("scale", { replicas: 3 }), undefined);
  });
});
