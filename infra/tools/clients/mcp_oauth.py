"""Signs in to the local stack's /mcp with the official MCP Python SDK's OAuth client, browserless.

The SDK does what a connector does: its first request answers 401, it reads the protected-resource metadata
the WWW-Authenticate header names, then the authorization server's metadata, registers (Dynamic Client
Registration), and opens the authorization URL with PKCE. Where a person would use a browser, this script's
redirect handler reads the consent page, enters the API key once, reads the second page (which names the
channel) and allows; the SDK then takes the code from the redirect, exchanges it for tokens, and lists the
tools and calls one with its access token. It prints one JSON object of what it saw, for
infra/local/mcp_oauth_test.go to check; its tokens are this run's, on a throwaway stack.

Environment: CSS_BASE (the stack's origin), CSS_KEY (an API key of the channel to grant).
"""

import asyncio
import json
import os
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

BASE = os.environ["CSS_BASE"]
KEY = os.environ["CSS_KEY"]
REDIRECT = "http://127.0.0.1:9/callback"  # never served: the handler reads the redirect's Location instead


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client = client_info


class Form(HTMLParser):
    """The consent page's form: its inputs (hidden ones carry the authorization request) and its text."""

    def __init__(self):
        super().__init__()
        self.fields, self.text = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "input" and a.get("type") == "hidden":
            self.fields.append((a["name"], a.get("value") or ""))

    def handle_data(self, data):
        self.text.append(data)


def read_form(html):
    f = Form()
    f.feed(html)
    return f.fields, " ".join(" ".join(f.text).split())


def as_data(fields):
    data = {}
    for k, v in fields:
        data.setdefault(k, []).append(v)
    return data


seen = {"steps": []}
redirect = {}


async def browse(url: str) -> None:
    """What the user does in the browser: open the page, enter the key, allow."""
    seen["authorizeUrl"] = url
    q = parse_qs(urlparse(url).query)
    seen["authorizeParams"] = {k: q[k][0] for k in ("code_challenge_method", "resource", "response_type") if k in q}
    async with httpx2.AsyncClient(follow_redirects=False) as browser:
        page = await browser.get(url)
        fields, text = read_form(page.text)
        seen["steps"].append({"status": page.status_code, "text": text})
        page = await browser.post(url.split("?")[0], data=as_data(fields + [("css_api_key", KEY), ("css_step", "login")]))
        fields, text = read_form(page.text)
        seen["steps"].append({"status": page.status_code, "text": text})
        fields = [(k, v) for k, v in fields if k != "css_api_key"] + [("css_api_key", KEY), ("css_step", "allow")]
        done = await browser.post(url.split("?")[0], data=as_data(fields))
        loc = urlparse(done.headers.get("location", ""))
        seen["steps"].append({"status": done.status_code, "redirect": f"{loc.scheme}://{loc.netloc}{loc.path}"})
        got = parse_qs(loc.query)
        redirect.update(code=got["code"][0], state=got.get("state", [None])[0], iss=got.get("iss", [None])[0])


async def callback() -> AuthorizationCodeResult:
    return AuthorizationCodeResult(**{k: v for k, v in redirect.items() if v is not None})


async def main():
    storage = Memory()
    auth = OAuthClientProvider(
        server_url=BASE + "/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="MCP Python SDK test", redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        ),
        storage=storage, redirect_handler=browse, callback_handler=callback,
    )
    async with httpx2.AsyncClient(auth=auth, timeout=60) as http:
        async with streamable_http_client(BASE + "/mcp", http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                tools = await session.list_tools()
                seen["tools"] = len(tools.tools)
                result = await session.call_tool("get_my_videos", {"status": "planned"})
                seen["callError"] = result.isError if hasattr(result, "isError") else result.is_error
                seen["callStructured"] = getattr(result, "structuredContent", None) or getattr(result, "structured_content", None)
    seen["clientId"] = storage.client.client_id if storage.client else None
    seen["tokenType"] = storage.tokens.token_type if storage.tokens else None
    seen["accessToken"] = storage.tokens.access_token if storage.tokens else None
    seen["refreshToken"] = storage.tokens.refresh_token if storage.tokens else None
    print(json.dumps(seen))


asyncio.run(main())
