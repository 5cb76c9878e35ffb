// Signing in to the web page in Debian's Chromium (playwright-core) against a real OpenID provider
// (provider/provider.mjs: oidc-provider) and the real `kotae serve`: two people of one tenant and one
// of another click "Sign in", log in at the provider, and come back to the page with their name,
// tenant and role in the top bar; a collection one creates is hers alone until shared; "Sign out"
// ends the session and the page offers "Sign in" again.
//
// Usage: node sign_in_browser_test.mjs KOTAE_BINARY WEB_DIR SERVER_DATA WORK_DIR
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, rmSync, symlinkSync, writeFileSync, realpathSync } from "node:fs";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";

const [kotae, webDir, serverData, work] = process.argv.slice(2);
const { chromium } = createRequire(join(webDir, "package.json"))("playwright-core");
const here = dirname(fileURLToPath(import.meta.url));
const accounts = {
  alice: { name: "Alice Adams", email: "alice@acme.test", tenant: "acme", groups: ["staff"] },
  anna: { name: "Anna Berg", email: "anna@acme.test", tenant: "acme", groups: [] },
  bob: { name: "Bob Cole", email: "bob@globex.test", tenant: "globex", groups: ["staff"] },
};

let provider, server, browser, base;

const freePort = () => new Promise(resolve => {
  const probe = createServer().listen(0, "127.0.0.1", () => { const { port } = probe.address(); probe.close(() => resolve(port)); });
});

// A child process, resolved once a line of its output satisfies `ready`.
function start(command, args, stream, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let buffer = "";
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start in 120 s`)), 120_000);
    child.on("exit", code => reject(new Error(`${args[0]} exited with ${code}`)));
    child[stream].on("data", chunk => {
      buffer += chunk;
      for (let nl; (nl = buffer.indexOf("\n")) >= 0; buffer = buffer.slice(nl + 1)) {
        if (ready(buffer.slice(0, nl))) { clearTimeout(timer); resolve(child); }
      }
    });
  });
}

before(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(work, "data"), { recursive: true });
  symlinkSync(realpathSync(join(serverData, "models")), join(work, "data", "models"));
  const [kotaePort, providerPort] = [await freePort(), await freePort()];
  base = `http://127.0.0.1:${kotaePort}`;
  const issuer = `http://127.0.0.1:${providerPort}`;
  const key = { ...generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" }), kid: "k1", alg: "ES256", use: "sig" };
  const secret = "browser-secret-0123456789abcdef";
  writeFileSync(join(work, "provider.json"), JSON.stringify({
    port: providerPort, keys: [key], audience: "https://kotae.test/api", accounts,
    clients: [{ client_id: "kotae-web", client_secret: secret, redirect_uris: [`${base}/auth/callback`],
                post_logout_redirect_uris: [`${base}/`], grant_types: ["authorization_code"], response_types: ["code"] }],
  }));
  writeFileSync(join(work, "client-secret"), secret);
  provider = await start("node", [join(here, "provider", "provider.mjs"), join(work, "provider.json")], "stdout",
    line => line.includes('"listening"'));
  server = await start(kotae, ["serve", "--data", join(work, "data"), "--port", String(kotaePort),
    "--oidc-issuer", issuer, "--oidc-tenant-claim", "tenant", "--group-role", "staff=editor",
    "--oidc-client-id", "kotae-web", "--oidc-client-secret-file", join(work, "client-secret"),
    "--oidc-redirect-url", `${base}/auth/callback`, "--oidc-scopes", "openid profile email groups tenant"],
  "stderr", line => line.startsWith("{") && JSON.parse(line).event === "ready");
  browser = await chromium.launch({ executablePath: process.env.KOTAE_CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
});

after(async () => {
  await browser?.close();
  for (const child of [server, provider]) if (child && child.exitCode === null) child.kill("SIGTERM");
});

// A browser of its own for `login`, signed in through the page's button and the provider's form.
async function signIn(login) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(base);
  await page.locator("#sign-in").click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
  // Consent, when the provider asks for it.
  if (await page.locator('input[name="prompt"][value="consent"]').count()) await page.locator('button[type="submit"]').click();
  await page.waitForURL(url => url.toString().startsWith(base));
  await page.locator("#who").waitFor();
  return page;
}

// The collections the page's session may see, as the server lists them to it.
const collections = page => page.evaluate(async () => {
  const response = await fetch("/v1/collections");
  return response.ok ? (await response.json()).data.map(c => c.name) : `HTTP ${response.status}`;
});

test("two people of one tenant and one of another sign in, each with their own view", async () => {
  const alice = await signIn("alice");
  assert.match(await alice.locator("#who").textContent(), /Alice Adams\s+acme · editor/);
  assert.equal(await alice.locator("#sign-in").isHidden(), true);
  await alice.locator("#new-collection").fill("hr-notes");
  await alice.locator("#create-collection button[type=submit]").click();
  await alice.locator("#collections li", { hasText: "hr-notes" }).waitFor();
  assert.deepEqual(await collections(alice), ["hr-notes"]);

  const anna = await signIn("anna");
  assert.match(await anna.locator("#who").textContent(), /Anna Berg\s+acme · reader/);
  assert.deepEqual(await collections(anna), [], "alice's collection is hers until shared");

  const bob = await signIn("bob");
  assert.match(await bob.locator("#who").textContent(), /Bob Cole\s+globex/);
  assert.deepEqual(await collections(bob), [], "another tenant never sees it");

  // Sign out: the session ends here and at the provider, and the page offers "Sign in" again.
  await alice.locator("#sign-out").click();
  await alice.waitForURL(url => !url.toString().startsWith(base) || url.pathname === "/");
  await alice.goto(base);
  await alice.locator("#sign-in").waitFor();
  assert.equal(await alice.locator("#who").isHidden(), true);
  assert.equal(await collections(alice), "HTTP 401");
});
