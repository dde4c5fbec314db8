// Each option is declared once, on its schema (src/config/declaration.ts): the environment table,
// the flag list and docs/configuration.md are made from the declarations, so this checks that
// every option is declared, that what is made from them says what the schema does, and that the
// committed docs/configuration.md is what `npm run docs:config` writes today.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { z } from "zod";
import { catalogOf, defaultOf, ENV_ENTRIES, OPTIONS, UNDECLARED } from "../../src/config/catalog.js";
import { option, section } from "../../src/config/declaration.js";
import { FLAG_NAMES, FLAGS, flagDescription, flagOverrides } from "../../src/config/flags.js";
import { defaultHelp } from "../../src/config/help.js";
import { ENV_OPTIONS, ENV_VARS } from "../../src/config/loadConfig.js";
import { renderReference } from "../../src/config/reference.js";
import { ConfigSchema, UpstreamSchema } from "../../src/config/schema.js";
import { REPO } from "../support/repoRoot.js";

const reference = readFileSync(join(REPO, "docs", "configuration.md"), "utf8");

describe("option declarations", () => {
  it("every leaf of the schema is a declared option, with a one-line help", () => {
    assert.deepEqual(UNDECLARED, []);
    assert.equal(OPTIONS.length, 104 + 1);
    for (const entry of OPTIONS) {
      assert.ok(!entry.meta.help.includes("\n") && entry.meta.help.length <= 130, `${entry.option}: help is one short line`);
      if (entry.meta.requiredUnless)
        assert.ok(
          OPTIONS.some((other) => other.option === entry.meta.requiredUnless),
          entry.option,
        );
    }
  });

  it("the environment table is the declarations': one variable per option that has one, none twice", () => {
    assert.equal(new Set(ENV_VARS).size, ENV_VARS.length);
    assert.deepEqual(
      ENV_OPTIONS.map(({ variable, option }) => [variable, option]),
      ENV_ENTRIES.map(({ variable, option }) => [variable, option]),
    );
    const fileOnly = OPTIONS.filter((entry) => entry.variable === undefined).map((entry) => entry.option);
    assert.deepEqual(fileOnly, [
      "upstream.env",
      "upstream.headers",
      "tasks.tools",
      "tasks.inputKeys",
      "access.default",
      "access.rules",
      "approvals",
      "backends",
      "federation.path",
      "federation.separator",
      "federation.backends",
      "federation.listTimeoutMs",
      "reload.watchFile",
      "reload.drainMs",
      "inventory.operators.subjects",
      "inventory.operators.scopes",
      "inventory.operators.claims",
      "notify.webhooks",
      "notify.webPush",
    ]);
  });

  it("a default is read from the schema; an optional block's options keep theirs (auth.jwt)", () => {
    const byName = (name: string) => OPTIONS.find((entry) => entry.option === name) as (typeof OPTIONS)[number];
    assert.deepEqual(defaultOf(byName("auth.jwt.jwksTimeoutMs")), { kind: "value", value: 5000 });
    assert.deepEqual(defaultOf(byName("auth.jwt.issuer")), { kind: "required" });
    assert.deepEqual(defaultOf(byName("quotas.maxHeldCalls")), { kind: "none" });
    for (const entry of OPTIONS) assert.doesNotMatch(defaultHelp(entry), /undefined/, entry.option);
    // The defaults shown are the ones loading gives.
    const loaded = ConfigSchema.parse({ upstream: { url: "http://u.example/" }, auth: { mode: "demo" } }) as Record<string, unknown>;
    for (const entry of OPTIONS) {
      const found = defaultOf(entry);
      // auth.jwt, federation and reload are optional blocks: absent unless set.
      if (found.kind !== "value" || ["auth", "federation", "reload"].includes(entry.path[0] as string)) continue;
      const value = entry.path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], loaded);
      assert.deepEqual(value, found.value, entry.option);
    }
  });

  it("flags: each flag's description has its real default, an enum's every value, a required option says so", () => {
    assert.deepEqual(Object.keys(FLAG_NAMES), [
      "upstream.url",
      "upstream.command",
      "host",
      "port",
      "auth.mode",
      "store.kind",
      "store.path",
      "store.url",
      "log.level",
      "log.format",
    ]);
    const auth = FLAGS.find((spec) => spec.name === "--auth");
    assert.equal(auth?.description, "(required) identity mode: demo | tokens | jwt");
    assert.equal(FLAGS.find((spec) => spec.name === "--port")?.description, "port to listen on (0 = any free port) (default: 3000)");
    for (const spec of FLAGS) assert.doesNotMatch(flagDescription(spec.entry), /undefined/, spec.name);
    assert.throws(() => FLAGS.find((spec) => spec.name === "--port")?.parseInteger?.("70000"), /must be an integer from 0 to 65535/);
  });

  it("flag text is read like the environment's; a problem names the option and the flag", () => {
    const given: Record<string, string> = { "--upstream-command": "node 'server.js", "--host": "0.0.0.0" };
    const { overrides, problems } = flagOverrides(FLAGS, (spec) => given[spec.name]);
    assert.deepEqual(overrides, { host: "0.0.0.0" });
    assert.deepEqual(problems, [
      "upstream.command: cannot be read as a command line: the single quote opened in it is never closed (from --upstream-command)",
    ]);
  });

  it("the upstream block is one section another block can mount: same options, its own variable prefix", () => {
    const fleet = z.object({
      backends: section(z.object({ search: section(UpstreamSchema.clone(), { help: "a backend", env: "SEARCH" }) }), {
        help: "backends",
      }),
      port: option(z.number().default(1), { help: "port" }),
    });
    const { options, undeclared } = catalogOf(fleet);
    assert.deepEqual(undeclared, []);
    const upstream = OPTIONS.filter((entry) => entry.section === "upstream");
    const mounted = options.filter((entry) => entry.section === "backends.search");
    assert.deepEqual(
      mounted.map((entry) => entry.path.at(-1)),
      upstream.map((entry) => entry.path.at(-1)),
    );
    assert.equal(mounted.find((entry) => entry.path.at(-1) === "url")?.variable, "TASKGATE_BACKENDS_SEARCH_URL");
    // The mount's checks are the upstream's own.
    assert.equal(UpstreamSchema.clone().safeParse({ url: "http://a/", command: ["x"] }).success, false);
  });
});

describe("docs/configuration.md", () => {
  it("is what `npm run docs:config` writes from the declarations (run it after changing an option)", () => {
    assert.equal(reference, renderReference(), "docs/configuration.md is stale: run npm run docs:config");
  });

  it("has a row for every option with its variable, flag and default", () => {
    for (const entry of OPTIONS) {
      const row = reference.split("\n").find((line) => line.startsWith(`| \`${entry.option}\` |`));
      assert.ok(row, `a row for ${entry.option}`);
      if (entry.variable) assert.ok(row.startsWith(`| \`${entry.option}\` | \`${entry.variable}\``), `${entry.option}: ${entry.variable}`);
      if (entry.meta.flag) assert.ok(row.includes(`\`${entry.meta.flag.split(" ")[0]}\``), `${entry.option}: its flag`);
      const found = defaultOf(entry);
      if (found.kind === "value" && typeof found.value !== "object" && !entry.meta.defaultText) {
        assert.ok(row.includes(`\`${String(found.value)}\``), `${entry.option}: default ${String(found.value)}`);
      }
    }
  });
});
