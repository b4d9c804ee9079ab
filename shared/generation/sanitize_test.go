package generation_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
)

func TestClean(t *testing.T) {
	allowed := generation.AllowedURLs{}
	allowed.Add("see https://mychannel.example/about and https://youtube.com/watch?v=abc")
	for _, c := range []struct{ in, want string }{
		{"plain title", "plain title"},
		{"line one\n\tindented", "line one\n\tindented"},
		{`<img src=x onerror=alert(1)>Best title`, "Best title"},
		{`<script>alert(1)</script>x`, "alert(1)x"},
		{`a <b>bold</b> move`, "a bold move"},
		{`<<b>img src=x onerror=alert(1)>`, ""},
		{`x <!-- hidden --> y`, "x  y"},
		{`2 < 3 and 5 > 4`, "2 < 3 and 5 > 4"},
		{`I <3 espresso`, "I <3 espresso"},
		{`Cheap Lunches <img`, "Cheap Lunches img"},
		{`Cheap Lunches <img src=x onerror=alert(1)`, "Cheap Lunches img src=x onerror=alert(1)"},
		{`<img src=x onerror=alert(1) <3>`, "img src=x onerror=alert(1) <3>"},
		{`a </b and <!x <?y <<i`, "a /b and !x ?y i"},
		{`[click](javascript:alert(1))`, "click"},
		{`[click]( JAVASCRIPT:alert(1) )`, "click"},
		{`[x](vbscript:msgbox)`, "x"},
		{`go to javascript:alert(1)`, "go to alert(1)"},
		{`java script:alert(1)`, "alert(1)"},
		{`data:text/html;base64,PHNjcmlwdD4=`, ""},
		{`the data: 50% of views`, "the data: 50% of views"},
		{`![pixel](https://evil.example/p.gif)`, "pixel"},
		{`[about](https://mychannel.example/about)`, "[about](https://mychannel.example/about)"},
		{`[promo](https://evil.example/promo)`, "promo"},
		{`visit https://evil.example/promo now`, "visit  now"},
		{`visit https://evil.example/promo.`, "visit ."},
		{`www.evil.example/x`, ""},
		{`watch https://youtube.com/watch?v=abc.`, "watch https://youtube.com/watch?v=abc."},
		{`see https://mychannel.example/about`, "see https://mychannel.example/about"},
		{"bell\x07 esc\x1b[31m red\u0085 c1", "bell esc[31m red c1"},
		{"crlf\r\nline", "crlf\nline"},
		{"abc\u202egnp.exe", "abcgnp.exe"},
		{"\u2066iso\u2069 \u200fmark", "iso mark"},
		{"non\ufffechar\uffff", "nonchar"},
		{"bad utf8 \xff\xfe", "bad utf8 "},
		{"emoji 🎬 and accents é", "emoji 🎬 and accents é"},
	} {
		if got := generation.Clean(c.in, allowed); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// forbidden reports what Clean must never leave in its output. tagLike is any "<" a browser would read
// as the start of a tag, a comment or a declaration, closed or not.
var (
	tagLike    = regexp.MustCompile(`<[A-Za-z/!?]`)
	activeLike = regexp.MustCompile(`(?i)(?:java|vb)\s*script\s*:|\bdata\s*:\s*[a-z]+/[a-z0-9.+-]+[;,]`)
)

// htmlKept are the tags CleanHTML keeps.
var htmlKept = regexp.MustCompile(`(?i)</?(?:p|br|ul|ol|li|blockquote|strong|em|b|i|h2|h3)\s*/?>|<a\s+href="(?:\{\{video_url\}\}|https://ok\.example/a)?"\s*>|</a\s*>`)

func forbiddenIn(s string, allowed generation.AllowedURLs) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	if tagLike.MatchString(s) {
		return "an HTML tag"
	}
	if activeLike.MatchString(s) {
		return "an active link"
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && (r < 0x20 || (r >= 0x7f && r <= 0x9f)) {
			return "a control character"
		}
		if (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x61c {
			return "a bidi control"
		}
	}
	for _, u := range generation.URLs(s) {
		if !allowed[strings.ToLower(u)] {
			return "the URL " + u
		}
	}
	return ""
}

func FuzzClean(f *testing.F) {
	for _, s := range generation.InjectionCorpus(f) {
		f.Add(s)
	}
	for _, s := range []string{"<<b>img>", "[a](javascript:x)", "\u202e", "https://ok.example/a https://evil.example", "<!--", "data:text/html,x", "\x00\x85", "Cheap Lunches <img", "<a <b>"} {
		f.Add(s)
	}
	allowed := generation.AllowedURLs{}
	allowed.Add("https://ok.example/a")
	f.Fuzz(func(t *testing.T, s string) {
		out := generation.Clean(s, allowed)
		if again := generation.Clean(out, allowed); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", s, out, again)
		}
		if what := forbiddenIn(out, allowed); what != "" {
			t.Fatalf("Clean(%q) = %q keeps %s", s, out, what)
		}
		h := generation.CleanHTML(s, allowed)
		if again := generation.CleanHTML(h, allowed); again != h {
			t.Fatalf("CleanHTML not idempotent: %q → %q → %q", s, h, again)
		}
		if what := forbiddenIn(htmlKept.ReplaceAllString(h, " "), allowed); what != "" {
			t.Fatalf("CleanHTML(%q) = %q keeps %s", s, h, what)
		}
	})
}

// An answer's strings are cleaned before they are checked and stored: HTML, active links and URLs that
// were in no input never reach the run's output (and so neither the API nor the webhooks).
func TestAnswerIsPlainText(t *testing.T) {
	e := newEnv(t, 100)
	e.writer.answers[generation.TaskTitles] = []string{`{"titles":[` +
		`{"title":"<img src=x onerror=alert(1)>How to edit a week of videos"},` +
		`{"title":"[click](javascript:alert(1)) the one-day system"},` +
		`{"title":"Edit faster: https://evil.example/promo \u202egnp.exe"},` +
		`{"title":"I edited 7 videos in 8 hours\u0000\u001b[31m"}]}`}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 10)}
	out, err := titles(t, e, contract.TitlesRequest{Title: "Editing a week of videos in a day", Type: "how-to"}, "")
	if err != nil || !out.Done {
		t.Fatal(err, out.Done)
	}
	var res contract.TitlesResult
	if err := json.Unmarshal(out.Output, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Titles) == 0 {
		t.Fatalf("no titles: %s", out.Output)
	}
	for _, ti := range res.Titles {
		if what := forbiddenIn(ti.Title, nil); what != "" || strings.Contains(ti.Title, "evil.example") {
			t.Errorf("stored title %q keeps %s", ti.Title, what)
		}
	}
	for _, call := range e.grader.calls {
		for _, m := range call.Messages {
			if strings.Contains(m.Text, "onerror") || strings.Contains(m.Text, "javascript:") {
				t.Errorf("the grader saw the raw answer:\n%s", m.Text)
			}
		}
	}
}

// The newsletter's bodyHtml is "simple HTML": its plain tags and links to allowed addresses stay.
func TestCleanHTML(t *testing.T) {
	allowed := generation.AllowedURLs{}
	allowed.Add("https://youtu.be/abc")
	for _, c := range []struct{ in, want string }{
		{"<p>Hi &amp; welcome</p>\n<ul>\n<li>one</li>\n</ul>", "<p>Hi &amp; welcome</p>\n<ul>\n<li>one</li>\n</ul>"},
		{`<p>Watch <a href="https://youtu.be/abc">https://youtu.be/abc</a></p>`, `<p>Watch <a href="https://youtu.be/abc">https://youtu.be/abc</a></p>`},
		{`<p>Watch <a href="{{video_url}}">now</a></p>`, `<p>Watch <a href="{{video_url}}">now</a></p>`},
		{`<p onclick="x()">a</p><img src=x onerror=alert(1)><script>b</script>`, `a</p>b`},
		{`<a href="javascript:alert(1)">x</a>`, `x</a>`},
		{`<a href="https://evil.example/p">x</a>`, `x</a>`},
		{`<p style="color:red">red</p>`, `red</p>`},
	} {
		if got := generation.CleanHTML(c.in, allowed); got != c.want {
			t.Errorf("CleanHTML(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
