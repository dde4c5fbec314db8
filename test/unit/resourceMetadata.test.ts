// resourceMetadata: the RFC 9728 document, when it is published, its resource identifier (configured
// or derived from the request's public URL), and the well-known URLs (RFC 9728 §3.1).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  buildResourceMetadata,
  metadataUrlFor,
  resourceIdentifier,
  resourceMetadataOptions,
  resourceMetadataWarning,
  wellKnownMetadataPaths,
} from "../../src/auth/resourceMetadata.js";
import { loadConfig } from "../../src/config/loadConfig.js";

const base = { TASKGATE_UPSTREAM_URL: "http://127.0.0.1:9/mcp" };
const jwtEnv = {
  ...base,
  TASKGATE_AUTH_MODE: "jwt",
  TASKGATE_AUTH_JWT_JWKS_URL: "https://login.example.com/jwks",
  TASKGATE_AUTH_JWT_ISSUER: "https://login.example.com/",
  TASKGATE_AUTH_JWT_AUDIENCE: "https://gw.example.com/mcp",
};

describe("resourceMetadataOptions: when taskgate publishes metadata", () => {
  it("mode jwt: always, the authorization server defaulting to the issuer", () => {
    const options = resourceMetadataOptions(loadConfig({ env: jwtEnv }).auth);
    assert.deepEqual(options, { authorizationServers: ["https://login.example.com/"] });
    assert.equal(resourceMetadataWarning(options), undefined);
  });

  it("mode jwt with configured authorization servers and scopes: those", () => {
    const auth = loadConfig({
      env: { ...jwtEnv, TASKGATE_AUTH_AUTHORIZATION_SERVERS: "https://as.example.com", TASKGATE_AUTH_SCOPES_SUPPORTED: "a,b" },
    }).auth;
    assert.deepEqual(resourceMetadataOptions(auth), { authorizationServers: ["https://as.example.com"], scopesSupported: ["a", "b"] });
  });

  it("other modes: only when auth.resourceMetadata is set; no authorization server → a warning", () => {
    assert.equal(resourceMetadataOptions(loadConfig({ env: { ...base, TASKGATE_AUTH_MODE: "demo" } }).auth), undefined);
    const options = resourceMetadataOptions(
      loadConfig({ env: { ...base, TASKGATE_AUTH_MODE: "demo", TASKGATE_AUTH_RESOURCE: "https://gw.example.com/mcp" } }).auth,
    );
    assert.deepEqual(options, { resource: "https://gw.example.com/mcp", authorizationServers: [] });
    assert.match(resourceMetadataWarning(options) ?? "", /authorizationServers is empty: .* names no authorization server/);
  });
});

describe("buildResourceMetadata", () => {
  it("the full document from configuration", () => {
    const options = {
      resource: "https://gw.example.com/mcp",
      authorizationServers: ["https://login.example.com/"],
      scopesSupported: ["mcp:tools"],
      resourceName: "Gateway",
    };
    assert.deepEqual(buildResourceMetadata(options, resourceIdentifier(options, "http://10.0.0.5:3000", "/mcp")), {
      resource: "https://gw.example.com/mcp",
      authorization_servers: ["https://login.example.com/"],
      bearer_methods_supported: ["header"],
      scopes_supported: ["mcp:tools"],
      resource_name: "Gateway",
    });
  });

  it("without configuration: resource derived from the public base URL and path; empty fields omitted", () => {
    const options = { authorizationServers: [] };
    const resource = resourceIdentifier(options, "https://gw.example.com/ignored?x=1", "/mcp");
    assert.equal(resource, "https://gw.example.com/mcp");
    assert.deepEqual(buildResourceMetadata(options, resource), { resource, bearer_methods_supported: ["header"] });
  });
});

describe("well-known URLs (RFC 9728 §3.1)", () => {
  it("metadataUrlFor inserts the well-known segment between host and path", () => {
    assert.equal(metadataUrlFor("https://gw.example.com/mcp"), "https://gw.example.com/.well-known/oauth-protected-resource/mcp");
    assert.equal(
      metadataUrlFor("https://gw.example.com:8443/tenant/a/mcp"),
      "https://gw.example.com:8443/.well-known/oauth-protected-resource/tenant/a/mcp",
    );
    assert.equal(metadataUrlFor("https://gw.example.com/"), "https://gw.example.com/.well-known/oauth-protected-resource");
    assert.equal(metadataUrlFor("https://gw.example.com"), "https://gw.example.com/.well-known/oauth-protected-resource");
  });

  it("wellKnownMetadataPaths: the path-suffixed form for the MCP path, then the bare form", () => {
    assert.deepEqual(wellKnownMetadataPaths("/mcp"), [
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-protected-resource",
    ]);
    assert.deepEqual(wellKnownMetadataPaths("/a/b"), [
      "/.well-known/oauth-protected-resource/a/b",
      "/.well-known/oauth-protected-resource",
    ]);
    assert.deepEqual(wellKnownMetadataPaths("/"), ["/.well-known/oauth-protected-resource"]);
  });
});
