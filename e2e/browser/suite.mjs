// The browser end-to-end suite (run by e2e/browser/run, which starts the
// servers). An MCP client built on the official TypeScript SDK connects to
// drivemail with OAuth: it discovers the authorization server, registers
// itself, and the authorization URL it opens is driven in Debian's chromium
// through both consent pages (drivemail's, then the emulated Google's) to
// the client's loopback redirect. With its token the client lists the
// tools, searches Drive and sends a Doc as PDF plus an inline image; the
// browser then checks the emulator's outbox shows that message with its
// image loaded and its attachment link working.
//
// Then, when DEMO_URL is set (a `serve --demo`), the same sign-in runs
// there, through its in-process emulator's consent page.
//
// Then, when FILE_URL is set (a `serve --drive-scope file` on the same
// emulator), the sign-in asks Google for drive.file and no drive.readonly;
// drive_search finds nothing; drive_pick's link opens drivemail's pick
// page, where the browser picks a Doc and a PDF in the emulator's Picker;
// send_email sends both (the Doc as PDF), and the outbox's bytes are
// checked against the seed's PDF and the emulator's own export of the Doc.
//
// Environment: DRIVEMAIL_URL, EMULATOR_URL, DEMO_URL? with DEMO_EMULATOR_URL,
// FILE_URL? with SEED_DIR (the emulator's seed folder), OUT_DIR (screenshots),
// CHROMIUM (default /usr/bin/chromium), SUITE_TIMEOUT_MS (default 180000),
// IGNORE_HTTPS_ERRORS=1 (a TLS proxy with a local CA; Node then needs
// NODE_EXTRA_CA_CERTS for the same CA).
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { MemoryOAuthProvider, startCallbackListener } from "./oauth.mjs";

const env = (name, def) => {
  const v = process.env[name] ?? def;
  if (v === undefined || v === "") throw new Error(`set ${name}`);
  return v;
};
const BASE = env("DRIVEMAIL_URL").replace(/\/$/, "");
const EMULATOR = env("EMULATOR_URL").replace(/\/$/, "");
const DEMO = process.env.DEMO_URL?.replace(/\/$/, "");
const DEMO_EMULATOR = process.env.DEMO_EMULATOR_URL?.replace(/\/$/, "");
const FILE = process.env.FILE_URL?.replace(/\/$/, "");
const SEED_DIR = process.env.SEED_DIR;
const OUT = env("OUT_DIR");
const CHROMIUM = env("CHROMIUM", "/usr/bin/chromium");
const TIMEOUT = Number(env("SUITE_TIMEOUT_MS", "180000"));
const USER = "demo@example.com";
const WANT_TOOLS = ["create_draft", "drive_get_file", "drive_search", "request_upload", "save_to_drive", "send_email"];
// serve --demo reads mail (--read-mail), and its sign-in grants it.
const WANT_DEMO_TOOLS = ["create_draft", "drive_get_file", "drive_search", "request_upload", "save_to_drive", "search_mail", "send_draft", "send_email"];
// serve --drive-scope file lists drive_pick.
const WANT_FILE_TOOLS = ["create_draft", "drive_get_file", "drive_pick", "drive_search", "request_upload", "save_to_drive", "send_email"];
const SCOPE = (s) => `https://www.googleapis.com/auth/${s}`;

mkdirSync(OUT, { recursive: true });
const t0 = Date.now();
const log = (msg) => console.log(`e2e[browser] +${((Date.now() - t0) / 1000).toFixed(1)}s ${msg}`);

// The whole suite is bounded: a hang anywhere fails it with the step name.
let current = "start";
const deadline = setTimeout(() => {
  console.error(`e2e[browser]: FAIL: timed out after ${TIMEOUT} ms during: ${current}`);
  process.exit(1);
}, TIMEOUT);
deadline.unref();

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

let page;
async function step(name, fn) {
  current = name;
  log(name);
  try {
    return await fn();
  } catch (err) {
    let where = "";
    if (page && !page.isClosed()) {
      where = `\n  page: ${page.url()}`;
      try {
        const text = (await page.locator("body").innerText({ timeout: 2000 })).slice(0, 1500);
        where += `\n  page text: ${text.replace(/\n+/g, " | ")}`;
        await page.screenshot({ path: join(OUT, "failure.png"), fullPage: true });
        where += `\n  screenshot: ${join(OUT, "failure.png")}`;
      } catch {
        // the page is gone; the step's own error says enough
      }
    }
    err.message = `step "${name}" failed: ${err.message}${where}`;
    throw err;
  }
}

// toolResult returns a tool call's structuredContent, or throws with the
// refusal text when the call answered isError.
async function toolResult(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    throw new Error(`${name} refused: ${res.content?.map((c) => c.text).join(" ")}`);
  }
  check(res.structuredContent, `${name} returned no structuredContent: ${JSON.stringify(res).slice(0, 500)}`);
  return res.structuredContent;
}

async function connect(base, provider) {
  const client = new Client({ name: "drivemail-e2e-browser", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
  return { client, transport, done: client.connect(transport) };
}

// signIn connects an MCP client to base through the whole OAuth flow,
// driving the browser page through drivemail's consent page and then the
// consent page of the emulated Google at origin google, which must ask
// for every scope of asks and none of never. shots names the screenshots
// ("" for none). It returns the connected client.
async function signIn(base, { google, shots, asks = [SCOPE("gmail.send"), SCOPE("drive.readonly")], never = [] }) {
  const callback = await startCallbackListener();
  const provider = new MemoryOAuthProvider(callback.redirectUrl, "drivemail browser e2e");
  try {
    const first = await step(`${base}: connect without a token (discovery, registration, authorization URL)`, async () => {
      const c = await connect(base, provider);
      try {
        await c.done;
      } catch (err) {
        check(err instanceof UnauthorizedError, `want UnauthorizedError from connect, got ${err}`);
        return c;
      }
      throw new Error("connect succeeded without any token");
    });
    await first.transport.close().catch(() => {});
    const authURL = new URL(await provider.authorizationUrl);
    check(authURL.origin === new URL(base).origin && authURL.pathname === "/oauth/authorize",
      `the client opened ${authURL.origin}${authURL.pathname}, want ${base}/oauth/authorize`);
    for (const p of ["client_id", "code_challenge", "state", "resource", "redirect_uri"]) {
      check(authURL.searchParams.get(p), `the authorization URL lacks ${p}`);
    }
    check(authURL.searchParams.get("code_challenge_method") === "S256", "the client did not use PKCE S256");
    check(provider.clientInformation()?.client_id, "the client did not register (no client_id)");

    await step("drivemail's consent page names the client, where access goes, and the permissions", async () => {
      await page.goto(authURL.href);
      await page.locator("#consent").waitFor();
      const name = await page.locator("#client-name").innerText();
      check(name === "drivemail browser e2e", `consent page names the client ${JSON.stringify(name)}`);
      const target = await page.locator("#redirect-target").innerText();
      check(target === new URL(callback.redirectUrl).origin, `consent page says access goes to ${target}, want ${new URL(callback.redirectUrl).origin}`);
      const perms = await page.locator("#permissions li").allInnerTexts();
      check(perms.some((p) => /send email/i.test(p)) && perms.some((p) => /drive/i.test(p)),
        `consent page permissions: ${perms.join("; ")}`);
      if (shots) await page.screenshot({ path: join(OUT, `${shots}-consent-drivemail.png`), fullPage: true });
      await page.locator("#approve").click();
    });

    await step("sign in at the emulated Google: choose the account, allow", async () => {
      await page.waitForURL((u) => u.href.startsWith(google), { timeout: 15000 });
      await page.locator("form#consent").waitFor();
      const scopes = await page.locator("#scopes input[type=checkbox]").evaluateAll((els) => els.map((e) => e.value));
      for (const s of asks) {
        check(scopes.includes(s), `Google's consent page does not ask for ${s}: ${scopes.join(" ")}`);
      }
      for (const s of never) {
        check(!scopes.includes(s), `Google's consent page asks for ${s}: ${scopes.join(" ")}`);
      }
      const account = page.locator(`#accounts input[data-email="${USER}"]`);
      if (await account.count()) {
        await account.check();
      } else {
        await page.locator("#typed-email").fill(USER);
      }
      if (shots) await page.screenshot({ path: join(OUT, `${shots}-consent-google-emulator.png`), fullPage: true });
      await page.locator("#approve").click();
    });

    const params = await step("the browser lands on the client's loopback redirect with a code", async () => {
      const p = await Promise.race([
        callback.params,
        new Promise((_, reject) => setTimeout(() => reject(new Error("no request reached the loopback redirect in 20 s")), 20000)),
      ]);
      check(!p.error, `authorization failed: ${p.error} ${p.error_description ?? ""}`);
      check(p.code, "the redirect carried no code");
      provider.checkState(p.state);
      await page.locator("#done").waitFor();
      return p;
    });

    return await step("token exchange, then connect with the token", async () => {
      await first.transport.finishAuth(params.code);
      check(provider.tokens()?.access_token, "no access token after the exchange");
      check(provider.tokens()?.refresh_token, "no refresh token after the exchange");
      const c = await connect(base, provider);
      await c.done;
      return c.client;
    });
  } finally {
    await callback.close();
  }
}

async function listToolNames(client, want = WANT_TOOLS) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(want), `tools/list: ${names.join(",")}`);
}

async function main() {
  const userDataDir = mkdtempSync(join(tmpdir(), "drivemail-chromium-"));
  let context;
  try {
    context = await step("launch chromium", () =>
      chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
        ],
        viewport: { width: 1100, height: 900 },
        // For a run against a TLS proxy with a local CA (the deployment smoke
        // check in docs/deployment.md); never set by e2e/browser/run.
        ignoreHTTPSErrors: process.env.IGNORE_HTTPS_ERRORS === "1",
        timeout: 30000,
      }),
    );
    context.setDefaultTimeout(15000);
    page = context.pages()[0] ?? (await context.newPage());
    const consoleErrors = [];
    // Browsers ask every origin for /favicon.ico; none of ours has one.
    page.on("console", (m) => {
      if (m.type() === "error" && !m.location().url?.endsWith("/favicon.ico")) {
        consoleErrors.push(`${m.location().url || page.url()}: ${m.text()}`);
      }
    });
    page.on("pageerror", (err) => consoleErrors.push(`${page.url()}: ${err.message}`));

    const client = await signIn(BASE, { google: EMULATOR, shots: "signin" });
    await step("tools/list", () => listToolNames(client));

    const { doc, image } = await step("drive_search finds a Doc and an image", async () => {
      const docs = await toolResult(client, "drive_search", { query: "", mime_type: "doc" });
      const pngs = await toolResult(client, "drive_search", { query: "", mime_type: "image/png" });
      const d = docs.files.find((f) => f.native);
      const i = pngs.files[0];
      check(d, `no Google Doc in the demo Drive: ${JSON.stringify(docs.files.map((f) => f.name))}`);
      check(d.export_formats?.includes("pdf"), `the Doc ${d.name} cannot be exported as pdf: ${d.export_formats}`);
      check(i, "no PNG image in the demo Drive");
      log(`  Doc "${d.name}" (${d.id}), image "${i.name}" (${i.id})`);
      return { doc: d, image: i };
    });

    const subject = `browser e2e ${Date.now()}`;
    const sent = await step("send_email: the Doc as pdf, the image inline through cid:", async () => {
      const res = await toolResult(client, "send_email", {
        to: ["ana@example.com"],
        subject,
        body_text: `${doc.name} is attached as a PDF.`,
        body_html: `<p>${doc.name} is attached as a PDF. Our logo:</p><p><img id="logo" src="cid:${image.name}" alt="logo"></p>`,
        attachments: [{ file_id: doc.id, as: "pdf" }, image.id],
      });
      check(res.id, "no Gmail message id");
      check(res.attached.length === 1 && res.attached[0].exported_as === "pdf" && res.attached[0].name.endsWith(".pdf"),
        `attached: ${JSON.stringify(res.attached)}`);
      check(res.attached[0].bytes > 0, "the PDF has no bytes");
      check(res.inline.length === 1 && res.inline[0].file_id === image.id, `inline: ${JSON.stringify(res.inline)}`);
      log(`  sent ${res.id}: ${res.attached[0].name} (${res.attached[0].bytes} B) + inline ${res.inline[0].name}`);
      return res;
    });

    await step("the emulator's outbox shows the message, its inline image and its attachment", async () => {
      await page.goto(`${EMULATOR}/_emulator/outbox`);
      const msg = page.locator(`#msg-${sent.id}`);
      await msg.waitFor();
      check((await msg.locator(".subject").innerText()) === subject, "the outbox shows another subject");
      check((await msg.locator(".to").innerText()).includes("ana@example.com"), "the outbox message is not to ana@example.com");

      const frame = await (await msg.locator("iframe.html-body").elementHandle()).contentFrame();
      check(frame, "the HTML body has no frame");
      await frame.waitForLoadState("load");
      const img = frame.locator("img").first();
      await img.waitFor();
      const width = await img.evaluate((el) => (el.complete ? el.naturalWidth : 0));
      check(width > 0, `the inline image did not load in the message body (naturalWidth ${width}, src ${await img.getAttribute("src")})`);

      const inline = msg.locator("li.inline-part");
      check((await inline.count()) === 1, `the outbox lists ${await inline.count()} inline parts, want 1`);

      const att = msg.locator("li.attachment a.download");
      check((await att.count()) === 1, `the outbox lists ${await att.count()} attachments, want 1`);
      const name = await att.innerText();
      check(name === sent.attached[0].name, `attachment link says ${name}, want ${sent.attached[0].name}`);
      const href = await att.getAttribute("href");
      const res = await page.request.get(new URL(href, EMULATOR).href);
      const body = await res.body();
      check(res.ok() && body.subarray(0, 5).toString() === "%PDF-", `the attachment link gives ${res.status()} starting ${JSON.stringify(body.subarray(0, 8).toString())}`);
      check(body.length === sent.attached[0].bytes, `the attachment has ${body.length} bytes, send_email said ${sent.attached[0].bytes}`);

      await msg.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(OUT, "outbox.png"), fullPage: true });
    });
    await client.close();

    if (DEMO) {
      check(DEMO_EMULATOR, "DEMO_URL is set without DEMO_EMULATOR_URL");
      const demoClient = await signIn(DEMO, { google: DEMO_EMULATOR, shots: "demo" });
      await step("serve --demo: tools/list with the token from the browser sign-in", () => listToolNames(demoClient, WANT_DEMO_TOOLS));
      await demoClient.close();
    }

    if (FILE) await pickAndSend();

    check(consoleErrors.length === 0, `the browser console logged errors:\n  ${consoleErrors.join("\n  ")}`);
    log(`ok: screenshots in ${OUT}`);
  } finally {
    await context?.close().catch(() => {});
    rmSync(userDataDir, { recursive: true, force: true });
  }
}

// pickAndSend is file mode, from sign-in to the outbox (see the top).
async function pickAndSend() {
  check(SEED_DIR, "FILE_URL is set without SEED_DIR");
  const client = await signIn(FILE, { google: EMULATOR, shots: "file", asks: [SCOPE("gmail.send"), SCOPE("drive.file")],
    never: [SCOPE("drive.readonly"), SCOPE("drive"), SCOPE("gmail.readonly"), SCOPE("gmail.compose")] });
  await step("file mode: tools/list has drive_pick", () => listToolNames(client, WANT_FILE_TOOLS));

  const link = await step("file mode: drive_search finds nothing, and offers the pick link", async () => {
    const res = await toolResult(client, "drive_search", { query: "" });
    check(res.files.length === 0, `drive_search found ${res.files.map((f) => f.name)} before any pick`);
    check(res.pick_url?.startsWith(`${FILE}/pick/`), `no pick link: ${JSON.stringify(res)}`);
    const pick = await toolResult(client, "drive_pick", {});
    check(pick.pick_url.startsWith(`${FILE}/pick/`) && pick.max_files === 10, `drive_pick: ${JSON.stringify(pick)}`);
    return pick.pick_url;
  });

  const want = ["Project plan", "Q3 Report.pdf"];
  await step("open the link, pick a Doc and a PDF in the emulator's Picker", async () => {
    await page.goto(link);
    const opened = page.waitForResponse((r) => r.request().method() === "POST" && r.url() === link);
    await page.locator("#choose").click();
    const csp = (await opened).headers()["content-security-policy"] ?? "";
    const origins = csp.match(/https?:\/\/[^\s;]+/g) ?? [];
    check(origins.length > 0 && origins.every((o) => o === EMULATOR), `the pick page's CSP lets in ${origins}, want the emulator's origin alone: ${csp}`);
    const dialog = page.frameLocator("#emulator-picker iframe");
    for (const name of want) {
      await dialog.locator("li.file label", { hasText: name }).locator("input").check();
    }
    await page.screenshot({ path: join(OUT, "file-picker.png"), fullPage: true });
    await dialog.locator("#select").click();
    await page.locator("body[data-done=true]").waitFor();
    const picked = await page.locator("#files li").allInnerTexts();
    check(JSON.stringify(picked.sort()) === JSON.stringify(want), `the page lists ${picked}, want ${want}`);
    check(/go back to your chat/i.test(await page.locator("#status").innerText()), "the page does not send the user back to the chat");
    await page.screenshot({ path: join(OUT, "file-picked.png"), fullPage: true });
  });

  const { doc, pdf } = await step("file mode: drive_search now lists the two files", async () => {
    const res = await toolResult(client, "drive_search", { query: "" });
    const names = res.files.map((f) => f.name).sort();
    check(JSON.stringify(names) === JSON.stringify(want), `drive_search lists ${names}, want ${want}`);
    return { doc: res.files.find((f) => f.native), pdf: res.files.find((f) => !f.native) };
  });

  const sent = await step("file mode: send_email with both, the Doc as pdf", () =>
    toolResult(client, "send_email", {
      to: ["ana@example.com"], subject: `picked ${Date.now()}`, body_text: "The plan and the report.",
      attachments: [{ file_id: doc.id, as: "pdf" }, pdf.id],
    }));

  await step("the outbox has the seed's PDF byte for byte, and the Doc as the emulator exports it", async () => {
    check(sent.attached.length === 2, `attached: ${JSON.stringify(sent.attached)}`);
    await page.goto(`${EMULATOR}/_emulator/outbox`);
    const msg = page.locator(`#msg-${sent.id}`);
    await msg.waitFor();
    const got = {};
    for (const a of await msg.locator("li.attachment a.download").all()) {
      got[await a.innerText()] = await (await page.request.get(new URL(await a.getAttribute("href"), EMULATOR).href)).body();
    }
    const seedPDF = readFileSync(join(SEED_DIR, USER, "Q3 Report.pdf"));
    check(got["Q3 Report.pdf"]?.equals(seedPDF), `Q3 Report.pdf has ${got["Q3 Report.pdf"]?.length} bytes, the seed ${seedPDF.length}`);
    const tok = await (await page.request.post(`${EMULATOR}/_emulator/users`, { data: { email: USER, scopes: [SCOPE("drive.readonly")] } })).json();
    const exported = await (await page.request.get(`${EMULATOR}/drive/v3/files/${doc.id}/export?mimeType=application/pdf`,
      { headers: { Authorization: `Bearer ${tok.access_token}` } })).body();
    check(got["Project plan.pdf"]?.equals(exported) && exported.subarray(0, 5).toString() === "%PDF-",
      `Project plan.pdf has ${got["Project plan.pdf"]?.length} bytes, the emulator's export ${exported.length}`);
    await msg.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(OUT, "file-outbox.png"), fullPage: true });
  });
  await client.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`e2e[browser]: FAIL: ${err.stack ?? err}`);
    process.exit(1);
  },
);
