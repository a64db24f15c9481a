// The compose view: the message send_email or create_draft prepared (every
// check done, nothing downloaded, nothing sent), for the user to read,
// edit and send, or cancel. Its data is the tool result's
// _meta["drivemail/compose"]; a result without it (a host drivemail could
// not tell renders views, or a refusal) is shown as the outcome it is.
"use strict";

const COMPOSE_META = "drivemail/compose";
const SEND_TOOL = "send_prepared";

let prepared = null; // the prepared message as the tool result gave it
const dropped = new Set(); // indexes into prepared.files

function start() {
  bridge.on("ui/notifications/tool-input", () => status("Checking the message and its files…"));
  bridge.on("ui/notifications/tool-result", showResult);
  bridge.on("ui/notifications/tool-cancelled", (p) => outcome("Cancelled", "The call was cancelled" + (p.reason ? ": " + p.reason : "") + ". Nothing was sent.", true));
  document.getElementById("send").addEventListener("click", send);
  document.getElementById("cancel").addEventListener("click", cancel);
  bridge.connect("drivemail compose").catch((e) => status("This view could not reach its host: " + e.message));
}

function status(text) {
  document.getElementById("status").textContent = visible(text, true);
}

function showResult(result) {
  const p = result && result._meta && result._meta[COMPOSE_META];
  if (result && !result.isError && p && typeof p.prepared === "string") {
    showPrepared(p);
    return;
  }
  const failed = Boolean(result && result.isError);
  outcome(failed ? "Refused" : doneTitle(result), resultText(result) || "The tool gave no result.", failed);
}

// doneTitle names what a result says went: a draft saved, or a message.
function doneTitle(result) {
  const s = result && result.structuredContent;
  if (s && s.cancelled) return "Cancelled";
  return s && s.draft_id ? "Draft saved" : "Sent";
}

function showPrepared(p) {
  prepared = p;
  dropped.clear();
  document.getElementById("title").textContent = p.draft ? "Review the draft" : "Review the email";
  document.getElementById("send").textContent = p.draft ? "Save draft" : "Send";
  status(p.draft ? "Nothing is saved yet. Edit what you need, then save the draft or cancel."
    : "Nothing has been sent yet. Edit what you need, then send it or cancel.");
  document.getElementById("from").textContent = visible(p.from || "");
  setValue("to", addressText(p.to));
  setValue("cc", addressText(p.cc));
  setValue("bcc", addressText(p.bcc));
  setValue("subject", p.subject || "");
  setValue("body-text", p.body_text || "");
  setValue("body-html", p.body_html || "");
  show("body-html-field", Boolean(p.body_html));
  show("forward-note", Boolean(p.forwarding));
  renderFiles(p.files || []);
  if (p.expires_at) {
    const when = new Date(p.expires_at);
    if (!isNaN(when)) document.getElementById("expires").textContent = "Send it before " + when.toLocaleTimeString() + "; after that, ask for it again.";
  }
  show("form", true);
  show("outcome", false);
  setBusy(false);
}

function setValue(id, v) {
  const e = document.getElementById(id);
  e.value = v;
  e.defaultValue = v;
}

function addressText(list) {
  return Array.isArray(list) ? list.join(", ") : "";
}

// renderFiles lists each file of the message: its name, what it is, and,
// for a link, where it points and who can open it.
function renderFiles(files) {
  const list = document.getElementById("files");
  list.replaceChildren();
  show("files-none", files.length === 0);
  files.forEach((f, i) => {
    const li = el("li", "file");
    li.dataset.index = String(i);
    const head = el("div", "file-head");
    head.append(el("span", "file-name untrusted", f.name));
    if (f.removable) {
      const label = el("label", "drop");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.addEventListener("change", () => {
        if (box.checked) dropped.add(i); else dropped.delete(i);
        li.classList.toggle("dropped", box.checked);
      });
      label.append(box, document.createTextNode(" Remove"));
      head.append(label);
    }
    li.append(head, el("div", "file-facts", fileFacts(f)));
    if (f.goes === "linked") {
      const link = el("div", "file-link");
      link.append(el("span", "untrusted", f.url));
      if (/^https:\/\//i.test(f.url || "") && bridge.canOpenLinks()) {
        const open = el("button", "link-button", "Open");
        open.type = "button";
        open.addEventListener("click", () => bridge.openLink(f.url).catch(() => {}));
        link.append(open);
      }
      li.append(link, el("div", "file-access", "Who can open it: " + (f.access || "whoever its sharing in Google Drive allows")));
    }
    list.append(li);
  });
}

// fileFacts says what a file is in one line: size, type, export, source.
function fileFacts(f) {
  const facts = [];
  if (f.goes === "linked") facts.push("a link in the body");
  else if (f.goes === "inline") facts.push("an image in the body");
  if (f.goes !== "linked") {
    if (typeof f.bytes === "number" && f.bytes >= 0) facts.push(humanBytes(f.bytes));
    else facts.push(f.exported_as ? "size known once exported" : "size known as it is sent");
  }
  if (f.exported_as) facts.push("a Google file exported as " + f.exported_as);
  else if (f.mime_type) facts.push(f.mime_type);
  if (f.sheet) facts.push("tab " + f.sheet);
  if (f.from === "gmail") facts.push("from a message in Gmail");
  else if (f.from === "client") facts.push("from the chat");
  else if (f.from === "call") facts.push("written by the assistant");
  return facts.join(" · ");
}

// edits are the fields the user changed, and the files they removed:
// only those go back, so what they did not touch stays as prepared.
function edits() {
  const args = { prepared: prepared.prepared };
  for (const [id, key] of [["to", "to"], ["cc", "cc"], ["bcc", "bcc"]]) {
    const e = document.getElementById(id);
    if (e.value !== e.defaultValue) args[key] = splitAddresses(e.value);
  }
  for (const [id, key] of [["subject", "subject"], ["body-text", "body_text"], ["body-html", "body_html"]]) {
    const e = document.getElementById(id);
    if (e.value !== e.defaultValue) args[key] = e.value;
  }
  if (dropped.size) args.drop = [...dropped].sort((a, b) => a - b);
  return args;
}

// splitAddresses splits a list at the commas between addresses, not at
// those inside a quoted display name or an <address>.
function splitAddresses(text) {
  const out = [];
  let cur = "";
  let quoted = false;
  let angle = false;
  for (const c of text) {
    if (c === '"' && !angle) quoted = !quoted;
    else if (c === "<" && !quoted) angle = true;
    else if (c === ">" && !quoted) angle = false;
    if ((c === "," || c === ";") && !quoted && !angle) {
      if (cur.trim()) out.push(cur.trim());
      cur = "";
      continue;
    }
    cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

// problem shows why the last press did nothing, beside the buttons.
function problem(text) {
  const p = document.getElementById("problem");
  p.textContent = visible(text, true);
  p.hidden = !text;
}

async function send() {
  if (!prepared) return;
  setBusy(true);
  problem("");
  status(prepared.draft ? "Saving the draft…" : "Sending…");
  await finish(edits(), prepared.draft ? "The user saved the draft from drivemail's compose view: " : "The user sent the email from drivemail's compose view: ");
}

async function cancel() {
  if (!prepared) return;
  setBusy(true);
  problem("");
  await finish({ prepared: prepared.prepared, cancel: true }, "The user cancelled the email in drivemail's compose view: ");
}

// finish calls send_prepared and shows what became of the message; a
// refusal keeps the form, so the user can mend what it names.
async function finish(args, told) {
  let result;
  try {
    result = await bridge.callTool(SEND_TOOL, args);
  } catch (e) {
    problem("The host did not pass the request on (" + e.message + "). Nothing is known to have been sent; ask the assistant what became of it.");
    setBusy(false);
    return;
  }
  const text = resultText(result);
  if (result.isError) {
    problem(text);
    setBusy(false);
    return;
  }
  outcome(doneTitle(result), text, false);
  bridge.tellModel(told + text);
}

function outcome(title, text, failed) {
  prepared = null;
  document.getElementById("title").textContent = title;
  show("form", false);
  show("outcome", true);
  status("");
  const o = document.getElementById("outcome-text");
  o.textContent = visible(text, true);
  o.classList.toggle("failed", failed);
}

function setBusy(busy) {
  for (const id of ["send", "cancel"]) document.getElementById(id).disabled = busy;
}

start();
