// The elicitation end-to-end suite (run by e2e/elicitation/run, which
// starts `serve --demo`): the MCP TypeScript SDK's client, declaring
// form elicitation with a handler, sends the demo's PDF with send_email.
// It is asked first, with the summary of what will go; accepted, the
// message is in the emulated Gmail with the PDF byte for byte; declined,
// nothing is sent and the result says so. A client of the same SDK that
// declares no elicitation is sent to unasked (--confirm-sends auto).
//
// Environment: DEMO_URL, DEMO_TOKEN, EMULATOR_URL (from start_demo), PDF
// (the path of the seed's Q3 Report.pdf), SUITE_TIMEOUT_MS (default 120000).
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const env = (name, def) => {
  const v = process.env[name] ?? def;
  if (v === undefined || v === "") throw new Error(`set ${name}`);
  return v;
};
const BASE = env("DEMO_URL").replace(/\/$/, "");
const TOKEN = env("DEMO_TOKEN");
const EMULATOR = env("EMULATOR_URL").replace(/\/$/, "");
const PDF = readFileSync(env("PDF"));
const TIMEOUT = Number(env("SUITE_TIMEOUT_MS", "120000"));
const log = (msg) => console.log(`e2e[elicitation]: ${msg}`);

const deadline = setTimeout(() => {
  console.error(`e2e[elicitation]: FAIL: timed out after ${TIMEOUT} ms`);
  process.exit(1);
}, TIMEOUT);
deadline.unref();

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

// connect returns a client of the demo; answer, when given, handles
// elicitation/create (and the client declares form elicitation).
async function connect(name, answer) {
  const client = new Client({ name, version: "1" }, answer ? { capabilities: { elicitation: { form: {} } } } : {});
  if (answer) client.setRequestHandler(ElicitRequestSchema, answer);
  const transport = new StreamableHTTPClientTransport(new URL(BASE + "/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  return client;
}

async function stats() {
  const r = await fetch(EMULATOR + "/_emulator/stats");
  check(r.ok, `emulator stats: ${r.status}`);
  return r.json();
}

// sentMessage reads message id back from the emulated Gmail, as the
// demo user, and returns it whole (RFC 5322).
async function sentMessage(id) {
  const u = await fetch(EMULATOR + "/_emulator/users", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email: "demo@example.com", scopes: ["https://www.googleapis.com/auth/gmail.readonly"] }),
  });
  const { access_token } = await u.json();
  const r = await fetch(`${EMULATOR}/gmail/v1/users/me/messages/${id}?format=raw`, { headers: { Authorization: `Bearer ${access_token}` } });
  check(r.ok, `the emulated Gmail has no message ${id}: ${r.status}`);
  return Buffer.from((await r.json()).raw, "base64url").toString("latin1");
}

const text = (res) => res.content.map((c) => c.text ?? "").join("\n");

async function main() {
  const lister = await connect("e2e-elicitation-lister");
  const found = await lister.callTool({ name: "drive_search", arguments: { query: "Q3 Report", mime_type: "pdf" } });
  const pdf = found.structuredContent?.files?.find((f) => f.name === "Q3 Report.pdf");
  check(pdf, `drive_search found no Q3 Report.pdf: ${text(found)}`);
  const args = (subject) => ({ to: "ana@example.com", subject, body_text: "Hi Ana,\nthe Q3 report is attached.", attachments: [pdf.id] });

  log("accept: asked with the summary, then sent");
  let asked = "";
  const before = await stats();
  const accepting = await connect("e2e-elicitation-accept", async (req) => {
    asked = req.params.message;
    const now = await stats();
    check(now.downloads === before.downloads, `asked after ${now.downloads - before.downloads} downloads`);
    return { action: "accept", content: { send: true } };
  });
  const sent = await accepting.callTool({ name: "send_email", arguments: args("e2e elicitation accept") });
  check(!sent.isError, `the accepted send failed: ${text(sent)}`);
  for (const want of ["Send this email?", "To: ana@example.com", "Subject: e2e elicitation accept", "- Q3 Report.pdf (", "> Hi Ana,"]) {
    check(asked.includes(want), `the question lacks ${JSON.stringify(want)}:\n${asked}`);
  }
  const raw = await sentMessage(sent.structuredContent.id);
  check(raw.includes('filename="Q3 Report.pdf"'), "the message has no Q3 Report.pdf");
  check(raw.replace(/\r\n/g, "").includes(PDF.toString("base64")), "the PDF sent is not the seed's bytes");
  log(`ok: message ${sent.structuredContent.id}, Q3 Report.pdf byte for byte`);

  log("decline: nothing sent");
  const declining = await connect("e2e-elicitation-decline", async () => ({ action: "decline" }));
  const beforeDecline = await stats();
  const declined = await declining.callTool({ name: "send_email", arguments: args("e2e elicitation decline") });
  const afterDecline = await stats();
  check(declined.isError === true && text(declined).includes("The user declined to send this email, so nothing was sent"), `the declined send: ${text(declined)}`);
  check(afterDecline.messages_sent === beforeDecline.messages_sent && afterDecline.downloads === beforeDecline.downloads,
    `a declined send sent ${afterDecline.messages_sent - beforeDecline.messages_sent} messages, downloaded ${afterDecline.downloads - beforeDecline.downloads} files`);
  log("ok: declined, nothing downloaded or sent");

  log("a client without elicitation: sent unasked (auto)");
  const unasked = await lister.callTool({ name: "send_email", arguments: args("e2e elicitation unasked") });
  check(!unasked.isError && unasked.structuredContent?.id, `the unasked send: ${text(unasked)}`);
  log("ok");

  await Promise.all([lister.close(), accepting.close(), declining.close()]);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`e2e[elicitation]: FAIL: ${err.stack || err}`);
    process.exit(1);
  },
);
