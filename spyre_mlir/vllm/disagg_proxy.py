"""The smallest router of prefill/decode disaggregation (docs/vllm-scale.md,
"Disaggregated prefill"), as vLLM's documentation describes its toy proxy: each completion goes
to the prefill instance with `max_tokens` 1 and `kv_transfer_params` {"do_remote_decode":
true}, then whole to the decode instance with the `kv_transfer_params` the prefill instance
answered with (connector.py names the transfer there). vLLM ships the proxy as an example
script, not in its package; in production llm-d's router takes its place.

    python -m spyre_mlir.vllm.disagg_proxy --prefill http://127.0.0.1:8100 \\
        --decode http://127.0.0.1:8200 --port 8000

Serves POST /v1/completions and /v1/chat/completions (the decode instance's answer passed
through as it comes, streamed or not), GET /health and GET /v1/models (the decode instance's).
A prefill instance that cannot be reached, fails, or answers without transfer parameters is
the client's 502, naming it and why: the request never reaches the decode instance then.
"""

from __future__ import annotations

import argparse
import copy
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

TIMEOUT_S = 600.0
"""Per request to an instance (a long prompt's prefill, a long generation)."""


def _prefill_body(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the prefill instance gets it: one token, not streamed, asking for the
    hand-over."""
    out = copy.deepcopy(body)
    out.update(max_tokens=1, stream=False, kv_transfer_params={"do_remote_decode": True, "do_remote_prefill": False})
    if "max_completion_tokens" in out:
        out["max_completion_tokens"] = 1
    for key in ("stream_options", "min_tokens"):
        out.pop(key, None)
    return out


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(
        status_code=status, content={"error": {"message": message, "type": "disagg_proxy", "code": status}}
    )


def make_app(prefill: str, decode: str, timeout_s: float = TIMEOUT_S) -> FastAPI:
    """The proxy between one prefill and one decode instance (base URLs, no /v1)."""
    app = FastAPI(title="spyre disaggregated prefill proxy")
    client = httpx.AsyncClient(timeout=timeout_s)
    app.router.on_shutdown.append(client.aclose)

    async def route(request: Request, path: str) -> Response:
        try:
            body = await request.json()
        except ValueError as e:
            return _error(400, f"the request body is not JSON: {e}")
        if not isinstance(body, dict):
            return _error(400, "the request body is not a JSON object")
        try:
            first = await client.post(f"{prefill}{path}", json=_prefill_body(body))
        except httpx.HTTPError as e:
            return _error(502, f"the prefill instance {prefill} did not answer: {type(e).__name__}: {e}")
        if first.status_code != 200:
            return Response(first.content, status_code=first.status_code, media_type="application/json")
        try:
            answer = first.json()
        except ValueError:
            answer = None
        params = answer.get("kv_transfer_params") if isinstance(answer, dict) else None
        if not isinstance(params, dict):
            return _error(
                502,
                f"the prefill instance {prefill} answered without kv_transfer_params (is it started with "
                '--kv-transfer-config of kv_role "kv_producer"?)',
            )
        second = {**body, "kv_transfer_params": params}
        try:
            upstream = await client.send(client.build_request("POST", f"{decode}{path}", json=second), stream=True)
        except httpx.HTTPError as e:
            return _error(502, f"the decode instance {decode} did not answer: {type(e).__name__}: {e}")
        if not body.get("stream"):
            content = await upstream.aread()
            await upstream.aclose()
            return Response(content, status_code=upstream.status_code, media_type="application/json")

        async def relay() -> Any:
            try:
                async for chunk in upstream.aiter_raw():
                    yield chunk
            finally:
                await upstream.aclose()

        return StreamingResponse(
            relay(), status_code=upstream.status_code, media_type=upstream.headers.get("content-type")
        )

    @app.post("/v1/completions")
    async def completions(request: Request) -> Response:
        return await route(request, "/v1/completions")

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        return await route(request, "/v1/chat/completions")

    @app.get("/v1/models")
    async def models() -> Response:
        try:
            r = await client.get(f"{decode}/v1/models")
        except httpx.HTTPError as e:
            return _error(502, f"the decode instance {decode} did not answer: {type(e).__name__}: {e}")
        return Response(r.content, status_code=r.status_code, media_type="application/json")

    @app.get("/health")
    async def health() -> Response:
        return Response(status_code=200)

    return app


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], prog="python -m spyre_mlir.vllm.disagg_proxy"
    )
    parser.add_argument("--prefill", required=True, help="the prefill instance's base URL (http://host:port)")
    parser.add_argument("--decode", required=True, help="the decode instance's base URL (http://host:port)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per request to an instance")
    args = parser.parse_args(argv)
    app = make_app(args.prefill.rstrip("/"), args.decode.rstrip("/"), args.timeout)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
