// The MCP Apps end-to-end suite (run by e2e/apps/run, which starts
// `serve --demo` and bundles host.mjs). drivemail's views are loaded the
// way a web host loads them, through the ext-apps SDK's host side
// (AppBridge) in Debian's chromium, in a sandbox proxy on its own origin
// whose CSP header is the policy the view's resource declares. A view's
// tools/call goes to drivemail's /mcp with the signed-in user's token, as
// a host proxies it. What is checked is what a user would see and what
// the emulated Gmail received:
//   - a client that declares the extension gets send_email linked to the
//     compose view and send_prepared (app only); one that does not gets
//     neither, and its send goes out as before;
//   - send_email prepares (nothing in the outbox) and the view lists the
//     message's files, a file named <img src=x onerror=alert(1)>.pdf as
//     that text;
//   - Send delivers it: the outbox has it, to the recipient the user
//     typed, without the file the user removed, with the files' bytes;
//   - Cancel sends nothing; a spent id, and another user's, are refused.
// Screenshots go to OUT_DIR.
//
// Environment: DEMO_URL, DEMO_TOKEN, DEMO_EMULATOR_URL, HOST_JS (the
// bundle), OUT_DIR, CHROMIUM, SEED_DIR (the demo seed, for the files'
// bytes), SUITE_TIMEOUT_MS (default 150000).
import { createServer } from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const env = (name, def) => {
  const v = process.env[name] ?? def;
  if (v === undefined || v === "") throw new Error(`set ${name}`);
  return v;
};
const BASE = env("DEMO_URL").replace(/\/$/, "");
const TOKEN = env("DEMO_TOKEN");
const EMULATOR = env("DEMO_EMULATOR_URL").replace(/\/$/, "");
const FILE = env("FILE_URL").replace(/\/$/, "");
const FILE_TOKEN = env("FILE_TOKEN");
const HOST_JS = readFileSync(env("HOST_JS"));
const OUT = env("OUT_DIR");
const SEED = env("SEED_DIR");
const CHROMIUM = env("CHROMIUM", "/usr/bin/chromium");
const TIMEOUT = Number(env("SUITE_TIMEOUT_MS", "150000"));
const HERE = new URL(".", import.meta.url).pathname;
const UI = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
const HOSTILE = "<img src=x onerror=alert(1)>.pdf";

mkdirSync(OUT, { recursive: true });
const t0 = Date.now();
const log = (msg) => console.log(`e2e[apps] +${((Date.now() - t0) / 1000).toFixed(1)}s ${msg}`);
let current = "start";
setTimeout(() => {
  console.error(`e2e[apps]: FAIL: timed out after ${TIMEOUT} ms during: ${current}`);
  process.exit(1);
}, TIMEOUT).unref();

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function step(name, fn) {
  current = name;
  log(name);
  try {
    return await fn();
  } catch (err) {
    err.message = `step "${name}" failed: ${err.message}`;
    throw err;
  }
}

// Session is an MCP client of drivemail over plain JSON-RPC (2025-11-25),
// declaring the MCP Apps extension or not, so the test says exactly what
// a host declares.
class Session {
  constructor(token, capabilities, base = BASE) {
    this.base = base;
    this.token = token;
    this.capabilities = capabilities;
    this.nextId = 1;
    this.sessionId = "";
  }

  async open() {
    await this.rpc("initialize", { protocolVersion: "2025-11-25", capabilities: this.capabilities, clientInfo: { name: "drivemail-e2e-apps", version: "1.0.0" } });
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    return this;
  }

  async post(body) {
    const headers = { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${this.token}`, "MCP-Protocol-Version": "2025-11-25" };
    if (this.sessionId) headers["Mcp-Session-Id"] = this.sessionId;
    const r = await fetch(`${this.base}/mcp`, { method: "POST", headers, body: JSON.stringify(body) });
    if (r.headers.get("mcp-session-id")) this.sessionId = r.headers.get("mcp-session-id");
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  }

  async rpc(method, params) {
    const { status, body } = await this.post({ jsonrpc: "2.0", id: this.nextId++, method, params });
    check(status === 200 && body && !body.error, `${method}: HTTP ${status} ${JSON.stringify(body).slice(0, 400)}`);
    return body.result;
  }

  call(name, args) {
    return this.rpc("tools/call", { name, arguments: args });
  }
}

const text = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function outbox() {
  const r = await fetch(`${EMULATOR}/_emulator/messages?user=demo@example.com`);
  check(r.ok, `the outbox answered ${r.status}`);
  return (await r.json()).messages.filter((m) => m.kind === "sent");
}

async function partBytes(file) {
  const r = await fetch(new URL(file.url, EMULATOR));
  check(r.ok, `part ${file.filename}: ${r.status}`);
  return Buffer.from(await r.arrayBuffer());
}

const sha = (b) => createHash("sha256").update(b).digest("hex");

// The host page's origin serves the page, the bundle and /rpc (a view's
// tools/call, sent to drivemail as `viewer`, the session the host holds);
// the sandbox's origin serves the proxy page under the view's policy.
let viewer;
function serve(handler) {
  return new Promise((resolve) => {
    const srv = createServer(handler);
    srv.listen(0, "127.0.0.1", () => resolve({ srv, origin: `http://127.0.0.1:${srv.address().port}` }));
  });
}

// hostCSP is the policy the spec says a host builds from a view's
// declared domains (its "CSP Construction from Metadata"), with entries
// that could break out of a directive dropped.
function hostCSP(csp) {
  const list = (v) => (Array.isArray(v) ? v.filter((d) => typeof d === "string" && !/[;\r\n'" ]/.test(d)) : []).join(" ");
  const res = list(csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${res}`,
    `style-src 'self' 'unsafe-inline' ${res}`,
    `connect-src 'self' ${list(csp.connectDomains)}`,
    `img-src 'self' data: ${res}`,
    `font-src 'self' ${res}`,
    `media-src 'self' data: ${res}`,
    `frame-src ${list(csp.frameDomains) || "'none'"}`,
    "object-src 'none'",
    `base-uri ${list(csp.baseUriDomains) || "'self'"}`,
  ].join("; ");
}

async function startServers() {
  const host = await serve(async (req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/host.html") {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(readFileSync(join(HERE, "host.html")));
    } else if (url.pathname === "/host.js") {
      res.writeHead(200, { "Content-Type": "text/javascript" }).end(HOST_JS);
    } else if (url.pathname === "/rpc" && req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += chunk;
      const p = JSON.parse(body);
      const out = await viewer.call(p.name, p.arguments ?? {});
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(out));
    } else {
      res.writeHead(404).end();
    }
  });
  const sandbox = await serve((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/sandbox.html") {
      const csp = JSON.parse(url.searchParams.get("csp") || "{}");
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": hostCSP(csp) })
        .end(`<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;height:100%}</style></head><body><script src="/sandbox.js"></script></body></html>`);
    } else if (url.pathname === "/sandbox.js") {
      res.writeHead(200, { "Content-Type": "text/javascript" }).end(readFileSync(join(HERE, "sandbox.js")));
    } else {
      res.writeHead(404).end();
    }
  });
  return { host, sandbox };
}

// uploadHostile puts a PDF with a hostile name in the demo Drive through
// /upload, as a user's file would arrive, and returns its id and bytes.
async function uploadHostile() {
  const bytes = Buffer.from(`%PDF-1.4\n% drivemail e2e ${randomBytes(8).toString("hex")}\n%%EOF\n`);
  const form = new FormData();
  form.append("file", new Blob([bytes], { type: "application/pdf" }), HOSTILE);
  const r = await fetch(`${BASE}/upload`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}` }, body: form });
  const out = await r.json();
  check(r.status === 201 && out.name === HOSTILE, `upload: ${r.status} ${JSON.stringify(out)}`);
  return { id: out.file_id, bytes };
}

async function main() {
  const { host, sandbox } = await startServers();
  const browser = await step("launch chromium", () =>
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"] }));
  const problems = [];
  try {
    const ui = await step("a host that declares the MCP Apps extension connects", () => new Session(TOKEN, { extensions: UI }).open());
    const plain = await new Session(TOKEN, {}).open();
    viewer = ui;

    const tools = await step("tools/list: send_email linked to the compose view, send_prepared for the view only", async () => {
      const { tools } = await ui.rpc("tools/list", {});
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      for (const name of ["send_email", "create_draft"]) {
        check(byName[name]?._meta?.ui?.resourceUri === "ui://drivemail/compose", `${name} _meta: ${JSON.stringify(byName[name]?._meta)}`);
        check(byName[name]._meta["openai/outputTemplate"] === "ui://drivemail/compose", `${name} has no openai/outputTemplate`);
      }
      check(JSON.stringify(byName.send_prepared?._meta?.ui?.visibility) === '["app"]', `send_prepared: ${JSON.stringify(byName.send_prepared?._meta)}`);
      const other = (await plain.rpc("tools/list", {})).tools;
      check(!other.some((t) => t.name === "send_prepared" || t._meta?.ui), "a client without the extension is listed the view's tools");
      return tools;
    });

    const compose = await step("resources/read ui://drivemail/compose", async () => {
      const { contents } = await ui.rpc("resources/read", { uri: "ui://drivemail/compose" });
      check(contents.length === 1 && contents[0].mimeType === "text/html;profile=mcp-app", `contents: ${JSON.stringify(contents).slice(0, 300)}`);
      const csp = contents[0]._meta?.ui?.csp;
      check(csp && csp.connectDomains.length === 0 && csp.resourceDomains.length === 0 && csp.frameDomains.length === 0, `csp: ${JSON.stringify(csp)}`);
      log(`  ${contents[0].text.length} bytes`);
      return { html: contents[0].text, csp };
    });

    const files = await step("drive_search: Q3 Report.pdf and a Doc; upload a file with a hostile name", async () => {
      const all = (await ui.call("drive_search", { query: "" })).structuredContent.files;
      const q3 = all.find((f) => f.name === "Q3 Report.pdf");
      const doc = all.find((f) => f.native && f.mime_type === "application/vnd.google-apps.document");
      check(q3 && doc, `demo Drive: ${all.map((f) => f.name).join(", ")}`);
      return { q3, doc, hostile: await uploadHostile() };
    });

    const page = await browser.newPage({ viewport: { width: 800, height: 900 } });
    // Browsers ask every origin for /favicon.ico; none of these has one.
    page.on("console", (m) => {
      if (m.type() === "error" && !m.location().url?.endsWith("/favicon.ico")) problems.push(`console: ${m.text()} (${m.location().url})`);
      else if (process.env.E2E_VERBOSE) log(`  console: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("dialog", async (d) => {
      problems.push(`a dialog opened: ${d.message()}`);
      await d.dismiss();
    });

    // render shows a tool's result in a fresh host page, as the host does.
    const render = async (input, result, theme = "light", view = compose, listed = tools) => {
      await page.goto(`${host.origin}/host.html`);
      await page.evaluate((p) => window.startView(p), { ...view, sandboxOrigin: sandbox.origin, tools: listed, input, result, theme });
      return page.frameLocator("#view").frameLocator("iframe");
    };

    const input = {
      to: ["ana@example.com"], subject: `apps e2e ${Date.now()}`, body_text: "Hi Ana,\nthe report and the plan.",
      attachments: [files.q3.id, files.hostile.id, { file_id: files.doc.id, as: "pdf" }],
    };
    const before = (await outbox()).length;
    const prep = await step("send_email from the host: prepared, nothing sent", async () => {
      const res = await ui.call("send_email", input);
      check(!res.isError, `refused: ${text(res)}`);
      const data = res._meta?.["drivemail/compose"];
      check(data?.prepared && res.structuredContent?.prepared?.expires_at, `no prepared message: ${JSON.stringify(res).slice(0, 500)}`);
      check(/Not sent yet/.test(text(res)), `text: ${text(res)}`);
      check((await outbox()).length === before, "the outbox grew before the user pressed Send");
      return res;
    });

    const v = await step("the compose view lists the message and its files; the hostile name is text", async () => {
      const v = await render(input, prep);
      await v.locator("#form").waitFor();
      check((await v.locator("#to").inputValue()) === "ana@example.com", "To is not ana@example.com");
      const names = await v.locator(".file-name").allTextContents();
      check(names.length === 3 && names.includes("Q3 Report.pdf") && names.includes(HOSTILE) && names.some((n) => n.endsWith(".pdf") && n !== HOSTILE && n !== "Q3 Report.pdf"),
        `files listed: ${JSON.stringify(names)}`);
      check((await v.locator("img").count()) === 0, "the view has an <img> element: a name was written as markup");
      const facts = await v.locator(".file-facts").allTextContents();
      check(facts.some((f) => /exported as pdf/.test(f)), `no export shown: ${JSON.stringify(facts)}`);
      await page.screenshot({ path: join(OUT, "compose.png"), fullPage: true });
      return v;
    });

    await step("Send, with an edited recipient and a file removed: the outbox has exactly that", async () => {
      await v.locator("#to").fill("Bo Berg <bo@example.com>");
      const docIndex = 2;
      await v.locator(`li.file[data-index="${docIndex}"] .drop input`).check();
      await page.screenshot({ path: join(OUT, "compose-edited.png"), fullPage: true });
      await v.locator("#send").click();
      await v.locator("#outcome").waitFor();
      const outcome = await v.locator("#outcome-text").textContent();
      check(/^Sent to /.test(outcome), `outcome: ${outcome}`);
      const sent = await outbox();
      check(sent.length === before + 1, `the outbox has ${sent.length - before} new messages, want 1`);
      const m = sent[0];
      check(m.subject === input.subject && m.to.length === 1 && /bo@example\.com/.test(m.to[0]), `sent to ${m.to} with subject ${m.subject}`);
      const got = Object.fromEntries(m.files.map((f) => [f.filename, f]));
      check(Object.keys(got).sort().join("|") === [HOSTILE, "Q3 Report.pdf"].sort().join("|"), `files sent: ${Object.keys(got)}`);
      check(sha(await partBytes(got["Q3 Report.pdf"])) === sha(readFileSync(join(SEED, "demo@example.com", "Q3 Report.pdf"))), "Q3 Report.pdf arrived with other bytes");
      check(sha(await partBytes(got[HOSTILE])) === sha(files.hostile.bytes), "the uploaded file arrived with other bytes");
      const told = await page.evaluate(() => window.modelContext);
      check(told.length === 1 && /sent the email/.test(told[0].content[0].text), `the model was told: ${JSON.stringify(told)}`);
      await page.screenshot({ path: join(OUT, "sent.png"), fullPage: true });
    });

    await step("the same prepared id again: refused, nothing more sent", async () => {
      const res = await ui.call("send_prepared", { prepared: prep._meta["drivemail/compose"].prepared });
      check(res.isError && /sent or cancelled already/.test(text(res)), `second use: ${JSON.stringify(res).slice(0, 300)}`);
      check((await outbox()).length === before + 1, "a second message went out");
    });

    await step("Cancel sends nothing, and spends the id", async () => {
      const res = await ui.call("send_email", { ...input, subject: `${input.subject} (cancelled)` });
      const w = await render(input, res, "dark");
      await w.locator("#form").waitFor();
      await page.screenshot({ path: join(OUT, "compose-dark.png"), fullPage: true });
      await w.locator("#cancel").click();
      await w.locator("#outcome").waitFor();
      check(/nothing was sent/.test(await w.locator("#outcome-text").textContent()), "the view does not say nothing was sent");
      const again = await ui.call("send_prepared", { prepared: res._meta["drivemail/compose"].prepared });
      check(again.isError, "a cancelled message could still be sent");
      check((await outbox()).length === before + 1, "Cancel sent a message");
    });

    await step("another user's token cannot send a prepared message; its own user still can", async () => {
      const res = await ui.call("send_email", { ...input, subject: `${input.subject} (other user)`, attachments: [files.q3.id] });
      const id = res._meta["drivemail/compose"].prepared;
      const alice = await new Session(await signInAlice(browser), { extensions: UI }).open();
      const theirs = await alice.call("send_prepared", { prepared: id });
      check(theirs.isError && /not prepared for this user/.test(text(theirs)), `alice: ${JSON.stringify(theirs).slice(0, 300)}`);
      check((await outbox()).length === before + 1, "another user's call sent it");
      const mine = await ui.call("send_prepared", { prepared: id });
      check(!mine.isError, `its own user: ${text(mine)}`);
      check((await outbox()).length === before + 2, "its own user's Send did not send it");
    });

    await step("a client without the extension sends as before", async () => {
      const res = await plain.call("send_email", { ...input, subject: `${input.subject} (no view)`, attachments: [files.q3.id] });
      check(!res.isError && res.structuredContent?.id && !res._meta?.["drivemail/compose"], `result: ${JSON.stringify(res).slice(0, 300)}`);
      check((await outbox()).length === before + 3, "it was not sent");
      const w = await render(input, res);
      await w.locator("#outcome").waitFor();
      check((await w.locator("#title").textContent()) === "Sent", "the view does not show a sent result as sent");
    });

    await step("file mode: drive_pick is linked to the pick view, which frames drivemail alone", async () => {
      viewer = await new Session(FILE_TOKEN, { extensions: UI }, FILE).open();
      const { tools: listed } = await viewer.rpc("tools/list", {});
      const pick = listed.find((t) => t.name === "drive_pick");
      check(pick?._meta?.ui?.resourceUri === "ui://drivemail/pick", `drive_pick _meta: ${JSON.stringify(pick?._meta)}`);
      const { contents } = await viewer.rpc("resources/read", { uri: "ui://drivemail/pick" });
      const csp = contents[0]._meta.ui.csp;
      check(JSON.stringify(csp.frameDomains) === JSON.stringify([FILE]) && csp.resourceDomains.length === 0 && csp.connectDomains.length === 0,
        `the pick view's csp: ${JSON.stringify(csp)}`);
      const res = await viewer.call("drive_pick", {});
      check(!res.isError && res.structuredContent.pick_url.startsWith(`${FILE}/pick/`), `drive_pick: ${JSON.stringify(res).slice(0, 300)}`);
      const w = await render({}, res, "light", { html: contents[0].text, csp }, listed);
      await w.locator("#choose").waitFor();
      await w.locator("#open").click();
      await page.waitForFunction((url) => window.openedLinks.includes(url), res.structuredContent.pick_url);
      await page.screenshot({ path: join(OUT, "pick.png"), fullPage: true });

      // Choosing here: drivemail's own page in the view, and the emulator's
      // Picker on that page.
      await w.locator("#inline").click();
      const inner = w.frameLocator("iframe.pick-frame");
      await inner.locator("#choose").click();
      const dialog = inner.frameLocator("#emulator-picker iframe");
      for (const name of ["Project plan", "Q3 Report.pdf"]) {
        await dialog.locator("li.file label", { hasText: name }).locator("input").check();
      }
      await page.screenshot({ path: join(OUT, "pick-inline.png"), fullPage: true });
      await dialog.locator("#select").click();
      await inner.locator("body[data-done=true]").waitFor();
      const found = (await viewer.call("drive_search", { query: "" })).structuredContent.files.map((f) => f.name).sort();
      check(JSON.stringify(found) === JSON.stringify(["Project plan", "Q3 Report.pdf"]), `after the pick, drive_search lists ${found}`);
      await page.screenshot({ path: join(OUT, "pick-done.png"), fullPage: true });
    });

    check(problems.length === 0, `the browser reported:\n  ${problems.join("\n  ")}`);
    log(`ok: screenshots in ${OUT}`);
  } finally {
    await browser.close().catch(() => {});
    host.srv.close();
    sandbox.srv.close();
  }
}

// signInAlice signs alice@example.com in to drivemail through both consent
// pages in the browser, as a second user of the same server, and returns
// her access token.
async function signInAlice(browser) {
  const cb = await serve((req, res) => res.writeHead(200, { "Content-Type": "text/plain" }).end("signed in"));
  try {
    const redirect = `${cb.origin}/callback`;
    const reg = await (await fetch(`${BASE}/oauth/register`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_name: "drivemail apps e2e", redirect_uris: [redirect], grant_types: ["authorization_code"], token_endpoint_auth_method: "none" }),
    })).json();
    check(reg.client_id, `registration: ${JSON.stringify(reg)}`);
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const auth = new URL(`${BASE}/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: "code", client_id: reg.client_id, redirect_uri: redirect, code_challenge: challenge,
      code_challenge_method: "S256", state: "apps-e2e", resource: `${BASE}/mcp` })) auth.searchParams.set(k, v);
    const page = await browser.newPage();
    try {
      const landed = page.waitForRequest((r) => r.url().startsWith(redirect), { timeout: 20000 });
      await page.goto(auth.href);
      await page.locator("#approve").click();
      await page.waitForURL((u) => u.href.startsWith(EMULATOR), { timeout: 15000 });
      const account = page.locator('#accounts input[data-email="alice@example.com"]');
      if (await account.count()) await account.check();
      else await page.locator("#typed-email").fill("alice@example.com");
      await page.locator("#approve").click();
      const code = new URL((await landed).url()).searchParams.get("code");
      check(code, "no code at the redirect");
      const tok = await (await fetch(`${BASE}/oauth/token`, {
        method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirect, client_id: reg.client_id, code_verifier: verifier, resource: `${BASE}/mcp` }),
      })).json();
      check(tok.access_token, `token: ${JSON.stringify(tok)}`);
      return tok.access_token;
    } finally {
      await page.close();
    }
  } finally {
    cb.srv.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`e2e[apps]: FAIL: ${err.stack ?? err}`);
    process.exit(1);
  },
);
