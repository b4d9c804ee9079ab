package mcp

import "testing"

func TestListSummary(t *testing.T) {
	seven := `{"videos":[{"title":"A"},{"title":"B"},{"title":"C"},{"title":"D"},{"title":"E"},{"title":"F"},{"title":"G"}],"total":7}`
	cases := []struct {
		name, body, want string
	}{
		{"empty", `{"videos":[],"total":0}`, "0 videos."},
		{"one", `{"videos":[{"title":"Só \"um\""}],"total":1}`, `1 video: "Só \"um\"".`},
		{"five titles, no more", `{"videos":[{"title":"A"},{"title":"B"},{"title":"C"},{"title":"D"},{"title":"E"}],"total":5}`,
			`5 videos: "A", "B", "C", "D", "E".`},
		{"more than five", seven, `7 videos: "A", "B", "C", "D", "E", ....`},
		{"a page of a longer list", `{"videos":[{"title":"A"},{"title":"B"}],"total":40}`, `40 videos: "A", "B", ....`},
		{"names when no title", `{"videos":[{"name":"Weekly"},{"title":""}],"total":2}`, `2 videos: "Weekly", ....`},
		{"no total: every item counted", `{"videos":[{"title":"A"},{"title":"B"},{"title":"C"},{"title":"D"},{"title":"E"},{"title":"F"},{"x":1}]}`,
			`7 videos: "A", "B", "C", "D", "E", ....`},
		{"nothing to name", `{"videos":[{"x":1},{"x":2}],"total":2}`, "2 videos."},
	}
	summary := listSummary("videos", "video")
	for _, c := range cases {
		if got := summary(c.body); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := listSummary("series", "series")(`{"series":[{"name":"S"}],"total":3}`); got != `3 series: "S", ....` {
		t.Errorf("series: %q", got)
	}
}
