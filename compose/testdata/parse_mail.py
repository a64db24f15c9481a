"""Parse one RFC 5322 message from stdin with Python's email package and
print its tree as JSON, for compose's round-trip tests."""
import email
import email.policy
import hashlib
import json
import sys


def shape(part):
    if part.is_multipart():
        return part.get_content_type() + "(" + ",".join(shape(p) for p in part.iter_parts()) + ")"
    return part.get_content_type()


def leaves(part):
    if part.is_multipart():
        for p in part.iter_parts():
            yield from leaves(p)
    else:
        yield part


def main():
    msg = email.message_from_bytes(sys.stdin.buffer.read(), policy=email.policy.default)
    defects = [type(d).__name__ for p in msg.walk() for d in p.defects]
    parts = []
    for p in leaves(msg):
        payload = p.get_payload(decode=True) or b""
        cid = p.get("Content-ID")
        parts.append({
            "type": p.get_content_type(),
            "filename": p.get_filename(),
            "content_id": str(cid).strip().strip("<>") if cid else None,
            "disposition": p.get_content_disposition(),
            "sha256": hashlib.sha256(payload).hexdigest(),
            "text": p.get_content() if p.get_content_maintype() == "text" and not p.get_filename() else None,
        })
    print(json.dumps({
        "subject": str(msg["Subject"]),
        "from": str(msg["From"]),
        "to": str(msg["To"]),
        "shape": shape(msg),
        "parts": parts,
        "defects": defects,
    }))


main()
