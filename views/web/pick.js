// The pick view: drive_pick's link to Google's file picker. The link
// opens in a new tab through the host (ui/open-link), the way that works
// wherever links open; or, where the host lets this view frame drivemail,
// the same page opens inside the view. Either way the Picker runs on
// drivemail's own page, so no Google token ever passes through the host.
// Only a link to drivemail's own pick page is opened or framed.
"use strict";

let link = "";

function start() {
  bridge.on("ui/notifications/tool-result", showResult);
  document.getElementById("open").addEventListener("click", openTab);
  document.getElementById("inline").addEventListener("click", openHere);
  document.getElementById("done").addEventListener("click", done);
  bridge.connect("drivemail pick").catch((e) => status("This view could not reach its host: " + e.message));
}

function status(text) {
  document.getElementById("status").textContent = visible(text, true);
}

function problem(text) {
  const p = document.getElementById("problem");
  p.textContent = visible(text, true);
  p.hidden = !text;
}

function showResult(result) {
  const s = result && result.structuredContent;
  const url = s && typeof s.pick_url === "string" ? s.pick_url : "";
  if (result.isError || !url.startsWith(VIEW_DATA.pickPrefix)) {
    status(resultText(result) || "drive_pick gave no link.");
    return;
  }
  link = url;
  document.getElementById("link").textContent = visible(url);
  const until = new Date(s.expires_at);
  document.getElementById("until").textContent = isNaN(until) ? "for 15 minutes" : "until " + until.toLocaleTimeString();
  document.getElementById("open").hidden = !bridge.canOpenLinks();
  status("Choose the files for the assistant to attach.");
  show("choose", true);
}

function openTab() {
  problem("");
  bridge.openLink(link).then(
    () => status("Choose your files in the new tab, then come back here."),
    () => problem("The app did not open the link. Use \u201cChoose here\u201d, or copy the link into your browser."));
}

// openHere frames drivemail's pick page; ?in=view asks it for the
// framing its own policy otherwise forbids.
function openHere() {
  problem("");
  const box = document.getElementById("frame-box");
  const frame = document.createElement("iframe");
  frame.title = "Choose files from Google Drive";
  frame.className = "pick-frame";
  frame.referrerPolicy = "no-referrer";
  frame.src = link + (link.includes("?") ? "&" : "?") + "in=view";
  box.replaceChildren(frame);
  box.hidden = false;
  document.getElementById("inline").disabled = true;
  status("Choose your files below.");
}

// done tells the assistant to go on: its next turn lists the files.
function done() {
  const text = "I have chosen the files in Google Drive.";
  bridge.sendMessage(text).catch(() => bridge.tellModel("The user says they have chosen their files with drive_pick's link: call drive_search to list them."));
  status("The assistant can now find the files you chose.");
}

start();
