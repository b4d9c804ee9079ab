package rest_test

import (
	"fmt"
	"testing"
)

// Issue 19 item 18: /my-videos pages in the store: limit and offset give one page, newest first, and
// total counts every matching video; without limit, every matching video as before.
func TestMyVideosPages(t *testing.T) {
	e := newEnv(t)
	for i := range 7 {
		e.do(req{method: "POST", path: "/api/v1/my-videos", cred: e.keyA,
			body: map[string]any{"title": fmt.Sprintf("Video %d", i), "contentType": "Long", "formulaType": "story"}}).must(t, 200)
	}
	all := e.do(req{method: "GET", path: "/api/v1/my-videos", cred: e.keyA}).must(t, 200)
	if all.num("total") != 7 || len(all.list("videos")) != 7 {
		t.Fatalf("unpaged: %s", all.raw)
	}
	title := func(v any) string { return v.(map[string]any)["title"].(string) }
	p := e.do(req{method: "GET", path: "/api/v1/my-videos?limit=2&offset=3", cred: e.keyA}).must(t, 200)
	if vs := p.list("videos"); p.num("total") != 7 || len(vs) != 2 || title(vs[0]) != title(all.list("videos")[3]) || title(vs[1]) != title(all.list("videos")[4]) {
		t.Errorf("limit=2&offset=3: %s", p.raw)
	}
	last := e.do(req{method: "GET", path: "/api/v1/my-videos?limit=5&offset=5", cred: e.keyA}).must(t, 200)
	if last.num("total") != 7 || len(last.list("videos")) != 2 {
		t.Errorf("the last page: %s", last.raw)
	}
	filtered := e.do(req{method: "GET", path: "/api/v1/my-videos?status=planned&limit=3&offset=1", cred: e.keyA}).must(t, 200)
	if filtered.num("total") != 7 || len(filtered.list("videos")) != 3 || title(filtered.list("videos")[0]) != title(all.list("videos")[1]) {
		t.Errorf("filtered page: %s", filtered.raw)
	}
	none := e.do(req{method: "GET", path: "/api/v1/my-videos?status=published&limit=3", cred: e.keyA}).must(t, 200)
	if none.num("total") != 0 || len(none.list("videos")) != 0 {
		t.Errorf("no match: %s", none.raw)
	}
	e.do(req{method: "GET", path: "/api/v1/my-videos?limit=101", cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
}
