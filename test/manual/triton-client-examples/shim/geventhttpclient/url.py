from urllib.parse import urlsplit


class URL:
    def __init__(self, url):
        parts = urlsplit(url)
        self.host = parts.hostname
        self.port = parts.port or 80
        self.request_uri = parts.path or "/"
