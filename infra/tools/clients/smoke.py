"""The Python client's smoke run: the package openapi-python-client generated from the served contract
(css_client, on PYTHONPATH) against a running stack.

    CSS_BASE=http://127.0.0.1:8080 CSS_KEY=sk-css-... PYTHONPATH=<folder holding css_client> python smoke.py
"""

import os
import sys
import time
import uuid

from css_client import AuthenticatedClient
from css_client.api.context import put_niche_profile
from css_client.api.generation import generate_description, get_generation
from css_client.api.memory import create_note
from css_client.api.videos import commit_video, list_my_videos
from css_client.models import (
    CommitNewVideoRequest,
    ContentType,
    CreatorNote,
    DescriptionRequest,
    Error,
    ErrorCode,
    GeneratedDescription,
    GenerationAccepted,
    MyVideo,
    MyVideoList,
    NicheProfile,
    NoteCategory,
    NoteCreate,
    ToolRun,
    ToolRunStatus,
    VideoStatus,
)


def expect(step, response, kind):
    """The parsed body of response, which must be of kind; anything else ends the run."""
    if not isinstance(response.parsed, kind):
        sys.exit(f"{step}: answered {response.status_code} {response.content!r}")
    return response.parsed


def main():
    base, key = os.environ.get("CSS_BASE"), os.environ.get("CSS_KEY")
    if not base or not key:
        sys.exit("set CSS_BASE (the stack's address) and CSS_KEY (an API key)")
    client = AuthenticatedClient(base_url=base, token=key, raise_on_unexpected_status=True)

    r = put_niche_profile.sync_detailed(
        client=client,
        body=NicheProfile(
            broad_niche="cooking",
            focused_niche="vegan meal prep",
            keywords=["vegan", "meal prep", "budget", "protein"],
        ),
    )
    profile = expect("PUT /niche-profile", r, NicheProfile)
    print(f"PUT  /api/v1/niche-profile            {r.status_code} {profile.broad_niche} / {profile.focused_niche}")

    # CommitVideoRequest is CommitIdeaRequest or CommitNewVideoRequest: the generator types the body as one
    # of the two (issue 35 item 7).
    r = commit_video.sync_detailed(
        client=client,
        body=CommitNewVideoRequest(
            title="5 vegan lunches under $3 (Python)", content_type=ContentType.LONG, formula_type="listicle"
        ),
    )
    video = expect("POST /my-videos", r, MyVideo)
    print(f"POST /api/v1/my-videos                {r.status_code} {video.id} {video.status}")

    r = list_my_videos.sync_detailed(client=client, status=VideoStatus.PLANNED, limit=10)
    videos = expect("GET /my-videos", r, MyVideoList)
    if video.id not in [v.id for v in videos.videos]:
        sys.exit(f"GET /my-videos: {video.id} not listed in {r.content!r}")
    print(f"GET  /api/v1/my-videos?status=planned {r.status_code} total {videos.total}")

    r = create_note.sync_detailed(
        client=client,
        body=NoteCreate(category=NoteCategory.INSIGHT, content="Shorts do best on Tuesdays (Python client)"),
    )
    note = expect("POST /notes", r, CreatorNote)
    print(f"POST /api/v1/notes                    {r.status_code} {note.id} source {note.source}")

    r = generate_description.sync_detailed(
        client=client, body=DescriptionRequest(title="5 vegan lunches under $3"), prefer="respond-async"
    )
    accepted = expect("POST /generate/description (respond-async)", r, GenerationAccepted)
    if r.status_code != 202:
        sys.exit(f"POST /generate/description with Prefer: respond-async answered {r.status_code}")
    print(
        f"POST /api/v1/generate/description     {r.status_code} {accepted.generation_id} {accepted.status}"
        f" (Location {r.headers.get('Location')})"
    )

    for polls in range(1, 241):
        r = get_generation.sync_detailed(accepted.generation_id, client=client)
        run = expect("GET /generations/{id}", r, ToolRun)
        if run.status == ToolRunStatus.FAILED:
            sys.exit(f"generation {run.id} failed: {run.error}")
        if run.status == ToolRunStatus.SUCCESS:
            # output is a free-form object in the contract (each tool has its own result), so the client
            # gives it as a model with additional properties: read it as the tool's own result.
            output = GeneratedDescription.from_dict(run.output.to_dict())
            print(
                f"GET  /api/v1/generations/{run.id} {r.status_code} success after {polls} poll(s),"
                f" {run.tool_name}, {len(output.description)} characters"
            )
            break
        time.sleep(0.25)
    else:
        sys.exit(f"generation {accepted.generation_id} still pending after 240 polls")

    missing = uuid.UUID("00000000-0000-4000-8000-000000000000")
    r = get_generation.sync_detailed(missing, client=client)
    err = expect(f"GET /generations/{missing}", r, Error)
    if r.status_code != 404 or err.code != ErrorCode.NOT_FOUND:
        sys.exit(f"GET /generations/{missing}: want 404 NOT_FOUND, got {r.status_code} {err.code}")
    print(f"GET  /api/v1/generations/{missing} {r.status_code} typed Error: {err.code.value}: {err.error}")
    print("python client: smoke passed")


if __name__ == "__main__":
    main()
