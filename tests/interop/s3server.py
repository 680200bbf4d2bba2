"""A real S3-compatible server for the tests: moto's server on 127.0.0.1,
with signature checking on (INITIAL_NO_AUTH_ACTION_COUNT), so every request
fdl and DuckDB make must carry a valid AWS SigV4 signature. It honours
If-None-Match and If-Match on PutObject and CompleteMultipartUpload
(docs/s3.md says how that was checked).

Also a small HTTP proxy put in front of it to make the server misbehave on
purpose: ignore conditional headers (in front of a server that does not check
signatures, since the headers are signed), answer 503, or lose an answer
after the server acted on the request.
"""
import http.client
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time

from ledger import host_stops
import urllib.parse
import urllib.request

import boto3
import botocore.config


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc=None, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


class S3Server:
    """moto's server with one IAM user whose key signs everything."""

    def __init__(self, log_path, check_signatures=True):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ,
                   S3_UPLOAD_PART_MIN_SIZE="65536",    # small parts, so tests need no 5 MiB files
                   MOTO_ALLOW_NONEXISTENT_REGION="true")
        if check_signatures:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"  # the three calls below, then signatures are checked
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        wait_port(self.port, self.proc)
        self.key_id, self.secret = self._bootstrap_user() if check_signatures else ("AKIAUNCHECKED", "unchecked")

    def _iam(self, **params):
        params["Version"] = "2010-05-08"
        req = urllib.request.Request(self.endpoint + "/?" + urllib.parse.urlencode(params), headers={
            "Authorization": "AWS4-HMAC-SHA256 Credential=bootstrap/20260101/us-east-1/iam/aws4_request"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read().decode()

    def _bootstrap_user(self):
        self._iam(Action="CreateUser", UserName="fdl")
        self._iam(Action="PutUserPolicy", UserName="fdl", PolicyName="all", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        xml = self._iam(Action="CreateAccessKey", UserName="fdl")
        pick = lambda tag: xml.split(f"<{tag}>")[1].split(f"</{tag}>")[0]
        return pick("AccessKeyId"), pick("SecretAccessKey")

    def client(self, endpoint=None):
        return boto3.client("s3", endpoint_url=endpoint or self.endpoint, region_name="us-east-1",
                            aws_access_key_id=self.key_id, aws_secret_access_key=self.secret,
                            config=botocore.config.Config(s3={"addressing_style": "path"}))

    def env(self, endpoint=None):
        """What fdl and DuckDB need to reach the server, the AWS way."""
        return {"AWS_ACCESS_KEY_ID": self.key_id, "AWS_SECRET_ACCESS_KEY": self.secret,
                "AWS_ENDPOINT_URL": endpoint or self.endpoint, "AWS_REGION": "us-east-1",
                "AWS_PROFILE": "", "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}

    def keys(self, bucket, prefix=""):
        out = []
        for page in self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            out += [o["Key"] for o in page.get("Contents", [])]
        return sorted(out)

    def empty(self, bucket):
        """Deletes every object of `bucket` and the bucket: a test that
        names a bucket (docs do: s3://open-data) starts from none."""
        c = self.client()
        try:
            keys = self.keys(bucket)
        except c.exceptions.NoSuchBucket:
            return
        for i in range(0, len(keys), 1000):
            c.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys[i:i + 1000]]})
        c.delete_bucket(Bucket=bucket)

    def stop(self):
        host_stops(self.endpoint)
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class Proxy:
    """Forwards to the server, misbehaving as told by `rules`, a list of
    (predicate(method, path, headers, n), action); actions: "strip-conditions"
    (drop If-None-Match / If-Match), "503" (answer 503 without forwarding),
    "lose" (forward, then close the connection without answering). n counts
    requests seen so far. Every request is recorded in `seen`."""

    def __init__(self, upstream_port):
        self.rules = []
        self.seen = []
        self.headers = []  # each request's headers, in order
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items()}
                with proxy.lock:
                    n = len(proxy.seen)
                    proxy.seen.append((self.command, self.path))
                    proxy.headers.append(headers)
                    action = next((a for p, a in proxy.rules if p(self.command, self.path, headers, n)), None)
                if action == "503":
                    msg = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
                    self.send_response(503)
                    self.send_header("Content-Length", str(len(msg)))
                    self.end_headers()
                    if self.command != "HEAD":  # a HEAD answer has no body
                        self.wfile.write(msg)
                    return
                if action == "strip-conditions":
                    headers = {k: v for k, v in headers.items() if k.lower() not in ("if-none-match", "if-match")}
                conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                if action == "lose":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(resp.status)
                head = self.command == "HEAD"
                for k, v in resp.getheaders():
                    if k.lower() in ("transfer-encoding", "connection", "server", "date"):
                        continue
                    if k.lower() == "content-length" and not head:
                        continue
                    self.send_header(k, v)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        host_stops(self.endpoint)
        self.server.shutdown()
        self.server.server_close()
