# Stand-in for geventhttpclient (not on this machine's package mirror), for a hand run of Triton's
# Python HTTP client: the same calls over http.client. It sends exactly the headers given (plus Host
# and Content-Length), as geventhttpclient does.
import http.client
from .url import URL


class Response:
    def __init__(self, r):
        self.status_code = r.status
        self._headers = {k.lower(): v for k, v in r.getheaders()}
        self._body = r.read()

    def read(self, length=None):
        if length is None:
            body, self._body = self._body, b""
            return body
        body, self._body = self._body[:length], self._body[length:]
        return body

    def get(self, key, default=None):
        return self._headers.get(key.lower(), default)

    def __getitem__(self, key):
        return self._headers[key.lower()]

    def __contains__(self, key):
        return key.lower() in self._headers


class HTTPClient:
    @classmethod
    def from_url(cls, url, **kwargs):
        return cls(url)

    def __init__(self, url):
        self._conn = http.client.HTTPConnection(url.host, url.port)

    def _request(self, method, uri, body=None, headers=None):
        if isinstance(body, str):
            body = body.encode()
        self._conn.putrequest(method, uri, skip_accept_encoding=True)
        for k, v in (headers or {}).items():
            self._conn.putheader(k, v)
        if body:
            self._conn.putheader("Content-Length", str(len(body)))
        self._conn.endheaders(body)
        return Response(self._conn.getresponse())

    def get(self, request_uri, headers=None):
        return self._request("GET", request_uri, None, headers)

    def post(self, request_uri, body="", headers=None):
        return self._request("POST", request_uri, body, headers)

    def close(self):
        self._conn.close()
