"""Drives the emulator with google-api-python-client (Debian's
python3-googleapi), a Google client nobody here wrote, through the Drive
paths drivemail relies on. Run by TestPythonGoogleAPIClient; prints one
"ok NAME" line per check and exits non-zero on the first failure.

Environment: EMU (the emulator's origin), TOKEN (a Drive access token),
DISCOVERY (drive/v3's discovery document), DOC, BIG_DOC, SHARED_DOC, BIN
(file ids) and BIN_SIZE.
"""
import json
import os
import sys
import time
import urllib.request

import google.oauth2.credentials
import google_auth_httplib2
import httplib2
from googleapiclient import discovery, errors

EMU = os.environ["EMU"]


def check(name, ok, detail=""):
    if not ok:
        print("FAIL %s %s" % (name, detail))
        sys.exit(1)
    print("ok " + name)


with open(os.environ["DISCOVERY"]) as f:
    doc = json.load(f)
doc["rootUrl"] = EMU + "/"
doc["baseUrl"] = EMU + "/drive/v3/"
creds = google.oauth2.credentials.Credentials(os.environ["TOKEN"])
http = google_auth_httplib2.AuthorizedHttp(creds, http=httplib2.Http())
drive = discovery.build_from_document(doc, http=http)

# files.export: a small Doc as text.
text = drive.files().export(fileId=os.environ["DOC"], mimeType="text/plain").execute()
check("files.export", b"pelican" in text, repr(text[:80]))

# files.export of a shared-drive file, which takes no supportsAllDrives.
text = drive.files().export(fileId=os.environ["SHARED_DOC"], mimeType="text/plain").execute()
check("files.export from a shared drive", b"shared plan" in text, repr(text[:80]))

# files.export past 10 MB: Drive's 403 exportSizeLimitExceeded.
try:
    drive.files().export(fileId=os.environ["BIG_DOC"], mimeType="text/plain").execute()
    check("files.export past the cap", False, "no error")
except errors.HttpError as e:
    check("files.export past the cap", e.resp.status == 403 and b"exportSizeLimitExceeded" in e.content, e.content[:200])


def finish(op, name):
    check(name + ": pending first", not op.get("done") and op.get("name"), json.dumps(op))
    for _ in range(20):
        if op.get("done"):
            break
        time.sleep(0.01)
        op = drive.operations().get(name=op["name"]).execute()
    check(name + ": done", op.get("done") is True and "error" not in op, json.dumps(op))
    res = op["response"]
    check(name + ": response type", res.get("@type") == "type.googleapis.com/google.apps.drive.v3.DownloadFileResponse", json.dumps(res))
    return res


def fetch(uri):
    resp, body = http.request(uri, "GET")
    return resp, body


# files.download of the big Doc: the operation, then its downloadUri.
res = finish(drive.files().download(fileId=os.environ["BIG_DOC"], mimeType="text/plain").execute(), "files.download (export)")
check("downloadUri on the content host", res["downloadUri"].startswith("http://localhost:"), res["downloadUri"])
resp, body = fetch(res["downloadUri"])
check("downloadUri content", resp.status == 200 and resp["content-type"] == "text/plain" and len(body) > 10 << 20,
      "%s %s %d" % (resp.status, resp.get("content-type"), len(body)))

# files.download of a binary file: partial downloads allowed.
res = finish(drive.files().download(fileId=os.environ["BIN"]).execute(), "files.download (binary)")
check("partialDownloadAllowed", res.get("partialDownloadAllowed") is True, json.dumps(res))
resp, body = fetch(res["downloadUri"])
check("binary download", resp.status == 200 and len(body) == int(os.environ["BIN_SIZE"]), "%s %d" % (resp.status, len(body)))

# An export link is a web endpoint: without a token, the sign-in page.
link = drive.files().get(fileId=os.environ["DOC"], fields="exportLinks").execute()["exportLinks"]["text/plain"]
resp, body = httplib2.Http().request(link, "GET")
check("export link without a token", resp.status == 200 and resp["content-type"].startswith("text/html") and b"Sign in" in body,
      "%s %s" % (resp.status, resp.get("content-type")))

# The Drive API turned off: Google's 403 accessNotConfigured with details.
req = urllib.request.Request(EMU + "/_emulator/apis/drive", data=b'{"enabled": false}', method="PUT")
urllib.request.urlopen(req).read()
try:
    drive.files().list().execute()
    check("Drive API off", False, "no error")
except errors.HttpError as e:
    body = json.loads(e.content)["error"]
    reasons = [d.get("reason") for d in body.get("details", [])]
    check("Drive API off", e.resp.status == 403 and body["errors"][0]["reason"] == "accessNotConfigured" and "SERVICE_DISABLED" in reasons,
          e.content[:300])

# An injected 503 on an upload is answered once the body has been read:
# Python's http.client sends the whole body before it reads the answer,
# and used to wait out its 60 s timeout here.
req = urllib.request.Request(EMU + "/_emulator/faults", method="POST",
                             data=b'{"path_prefix":"/upload/drive/v3/files","status":503}')
urllib.request.urlopen(req).read()
from googleapiclient.http import MediaInMemoryUpload  # noqa: E402

req = urllib.request.Request(EMU + "/_emulator/apis/drive", data=b'{"enabled": true}', method="PUT")
urllib.request.urlopen(req).read()
media = MediaInMemoryUpload(b"x" * (8 << 20), mimetype="application/octet-stream", resumable=False)
began = time.monotonic()
try:
    drive.files().create(body={"name": "big.bin"}, media_body=media).execute()
    check("an injected 503 on an upload", False, "no error")
except errors.HttpError as e:
    took = time.monotonic() - began
    check("an injected 503 on an upload, answered at once", e.resp.status == 503 and took < 10, "%s after %.1f s" % (e.resp.status, took))
