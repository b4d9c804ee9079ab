// The TypeScript client's smoke run: openapi-fetch over the types openapi-typescript generated from the
// served contract (./schema.d.ts, written beside this file's compiled copy by the test). It is compiled
// with tsc --strict first, so a call that does not fit the contract fails before anything runs.
//
//	CSS_BASE=http://127.0.0.1:8080 CSS_KEY=sk-css-... node smoke.mjs
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type ApiError = components["schemas"]["Error"];

const base = process.env.CSS_BASE;
const key = process.env.CSS_KEY;
if (!base || !key) {
	throw new Error("set CSS_BASE (the stack's address) and CSS_KEY (an API key)");
}

const client = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${key}` } });

function fail(step: string, status: number, error: ApiError | undefined): never {
	throw new Error(`${step}: answered ${status} ${JSON.stringify(error)}`);
}

// The generated types reject a path the contract does not have: were they loose, this line would
// compile and tsc would refuse the unused directive.
// @ts-expect-error no such path in the contract
void client.GET("/api/v1/no-such-path");

const profile = await client.PUT("/api/v1/niche-profile", {
	body: {
		broadNiche: "cooking",
		focusedNiche: "vegan meal prep",
		keywords: ["vegan", "meal prep", "budget", "protein"],
	},
});
if (!profile.data) fail("PUT /niche-profile", profile.response.status, profile.error);
console.log(`PUT  /api/v1/niche-profile            ${profile.response.status} ${profile.data.broadNiche} / ${profile.data.focusedNiche}`);

const video = await client.POST("/api/v1/my-videos", {
	body: { title: "5 vegan lunches under $3 (TypeScript)", contentType: "Long", formulaType: "listicle" },
});
if (!video.data) fail("POST /my-videos", video.response.status, video.error);
console.log(`POST /api/v1/my-videos                ${video.response.status} ${video.data.id} ${video.data.status}`);

const videos = await client.GET("/api/v1/my-videos", { params: { query: { status: "planned", limit: 10 } } });
if (!videos.data) fail("GET /my-videos", videos.response.status, videos.error);
if (!videos.data.videos.some((v) => v.id === video.data.id)) {
	throw new Error(`GET /my-videos: ${video.data.id} not listed in ${JSON.stringify(videos.data)}`);
}
console.log(`GET  /api/v1/my-videos?status=planned ${videos.response.status} total ${videos.data.total}`);

const note = await client.POST("/api/v1/notes", {
	body: { category: "insight", content: "Shorts do best on Tuesdays (TypeScript client)" },
});
if (!note.data) fail("POST /notes", note.response.status, note.error);
console.log(`POST /api/v1/notes                    ${note.response.status} ${note.data.id} source ${note.data.source}`);

const started = await client.POST("/api/v1/generate/description", {
	params: { header: { Prefer: "respond-async" } },
	body: { title: "5 vegan lunches under $3" },
});
if (started.response.status !== 202 || !started.data || !("generationId" in started.data)) {
	fail("POST /generate/description (respond-async)", started.response.status, started.error);
}
const id = started.data.generationId;
console.log(`POST /api/v1/generate/description     ${started.response.status} ${id} ${started.data.status} (Location ${started.response.headers.get("Location")})`);

let polls = 0;
for (;;) {
	polls++;
	const run = await client.GET("/api/v1/generations/{id}", { params: { path: { id } } });
	if (!run.data) fail("GET /generations/{id}", run.response.status, run.error);
	if (run.data.status === "failed") throw new Error(`generation ${id} failed: ${run.data.error}`);
	if (run.data.status === "success") {
		const output = run.data.output as components["schemas"]["GeneratedDescription"];
		console.log(`GET  /api/v1/generations/${id} ${run.response.status} success after ${polls} poll(s), ${run.data.toolName}, ${output.description.length} characters`);
		break;
	}
	if (polls >= 240) throw new Error(`generation ${id} still ${run.data.status} after ${polls} polls`);
	await new Promise((resolve) => setTimeout(resolve, 250));
}

const missing = "00000000-0000-4000-8000-000000000000";
const gone = await client.GET("/api/v1/generations/{id}", { params: { path: { id: missing } } });
if (gone.response.status !== 404 || !gone.error || gone.data) {
	throw new Error(`GET /generations/${missing}: want a 404 Error, got ${gone.response.status} ${JSON.stringify(gone.data)}`);
}
const code: ApiError["code"] = gone.error.code;
if (code !== "NOT_FOUND") throw new Error(`404 with code ${code}`);
console.log(`GET  /api/v1/generations/${missing} ${gone.response.status} typed Error: ${code}: ${gone.error.error}`);
console.log("typescript client: smoke passed");
