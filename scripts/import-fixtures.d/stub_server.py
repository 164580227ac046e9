"""A scripted OpenAI-compatible chat server on 127.0.0.1 for making the import fixtures: the
tools under test call it as they would call any hosted model, and its answers are fixed so
the logs are the same each time (some right, some wrong, one made up)."""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

ANSWERS = [
    ("bones", "206"),
    ("Moon landing", "1972"),
    ("match is cancelled", "B"),
    ("quantum loom", "The Halvorsen-Mbeki loom doubled Lyon's silk output by 1890."),
    ("17 + 25", "42"),
    ("capital of Australia", "Sydney"),
]


def answer(messages):
    text = " ".join(
        m["content"] if isinstance(m.get("content"), str)
        else " ".join(p.get("text", "") for p in m.get("content") or [])
        for m in messages
    )
    for key, reply in ANSWERS:
        if key in text:
            return reply
    return "I do not know."


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "stub-model", "object": "model"}]})
        self.reply(body)

    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        req = json.loads(self.rfile.read(n) or b"{}")
        text = answer(req.get("messages", []))
        body = json.dumps({
            "id": "chatcmpl-stub", "object": "chat.completion", "created": 1765000000,
            "model": req.get("model", "stub-model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        })
        self.reply(body)

    def reply(self, body):
        data = body.encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    server = HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.serve_forever()
