import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  backendNameProblem,
  federatedName,
  MAX_BACKEND_NAME,
  MAX_FEDERATED_NAME,
  separatorProblem,
} from "../../src/protocol/federatedNames.js";

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

describe("backend names", () => {
  it("accepts path segments of lower-case letters, digits and '-'", () => {
    for (const name of ["everything", "files", "ci-2", "a", "0"]) assert.equal(backendNameProblem(name), undefined, name);
  });
  it("refuses upper case, '_', '/', a leading '-', the empty name and long names, saying why", () => {
    for (const name of ["Files", "my_files", "a/b", "-x", "", "x".repeat(MAX_BACKEND_NAME + 1), "ünï"]) {
      assert.match(backendNameProblem(name) ?? "", /backend name/, name);
    }
  });
});

describe("separators", () => {
  it("accepts '__', '_' and an upper-case letter mixed in", () => {
    for (const separator of ["__", "_", "X", "-_-"]) assert.equal(separatorProblem(separator), undefined, separator);
  });
  it("refuses characters outside the tool-name rules", () => {
    assert.match(separatorProblem(".") ?? "", /tool-name rules/);
    assert.match(separatorProblem("::") ?? "", /tool-name rules/);
  });
  it("refuses a separator a backend name could contain (ambiguous prefixes)", () => {
    assert.match(separatorProblem("-") ?? "", /ambiguous/);
    assert.match(separatorProblem("x") ?? "", /ambiguous/);
  });
  it("refuses the empty and the over-long separator", () => {
    assert.match(separatorProblem("") ?? "", /1 to 8/);
    assert.match(separatorProblem("_".repeat(9)) ?? "", /1 to 8/);
  });
});

describe("federated names", () => {
  it("is <backend><separator><name> when that fits the rules", () => {
    assert.deepEqual(federatedName("everything", "__", "echo"), { name: "everything__echo" });
    assert.deepEqual(federatedName("files", "__", "read_file"), { name: "files__read_file" });
  });
  it("replaces characters outside [A-Za-z0-9_-] with '_' and says so", () => {
    const named = federatedName("files", "__", "fs.read/v2");
    assert.equal(named.name, "files__fs_read_v2");
    assert.match(named.rewritten ?? "", /became '_'/);
  });
  it("shortens a name too long with its prefix to 64 characters ending in a hash of the original, the same every time", () => {
    const long = `generate_${"very_".repeat(20)}long_report`;
    const first = federatedName("build", "__", long);
    assert.equal(first.name.length, MAX_FEDERATED_NAME);
    assert.match(first.name, TOOL_NAME);
    assert.ok(first.name.startsWith("build__generate_very_"));
    assert.match(first.rewritten ?? "", /shortened/);
    assert.deepEqual(federatedName("build", "__", long), first);
    const other = federatedName("build", "__", `${long}_2`);
    assert.notEqual(other.name, first.name, "two long names sharing a head still differ");
  });
  it("keeps every result within the rules, at the longest backend name and separator", () => {
    const backend = "b".repeat(MAX_BACKEND_NAME);
    for (const name of ["x", "a.b.c", "é".repeat(80), "t".repeat(200), ""]) {
      assert.match(federatedName(backend, "________", name).name, TOOL_NAME, name);
    }
  });
});
