package generation

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"text/template"
	"unicode/utf8"
)

// The prompts, one template per task plus the system prompt every task shares, kept as text files so
// whoever tunes them reads prompts, not Go.
//
//go:embed prompts/*.tmpl
var promptFiles embed.FS

var loadPrompts = sync.OnceValues(func() (*template.Template, error) {
	return template.New("").Option("missingkey=zero").Funcs(template.FuncMap{
		"join":         strings.Join,
		"patternChars": func() int { return MaxPatternChars },
		"duration":     func(secs int) string { return fmt.Sprintf("%d:%02d", secs/60, secs%60) },
	}).ParseFS(promptFiles, "prompts/*.tmpl")
})

// promptData is what a template sees: the brief, its request body as a map (In.title, In.type, ...) and
// the number of items asked for (Brief.Count, else the titles a call writes).
type promptData struct {
	*Brief
	In    map[string]any
	Count int
}

// Render writes the system prompt and the user message of a brief.
func Render(b *Brief) (system, user string, err error) {
	t, err := loadPrompts()
	if err != nil {
		return "", "", fmt.Errorf("generation: prompts: %w", err)
	}
	d := promptData{Brief: b, In: map[string]any{}, Count: cmp.Or(b.Count, MaxTitlesPerCall)}
	if len(b.Input) > 0 {
		if err := json.Unmarshal(b.Input, &d.In); err != nil {
			return "", "", fmt.Errorf("generation: brief input: %w", err)
		}
	}
	task := b.Task
	if task == TaskRefine {
		task = "refine"
	}
	var sys, usr bytes.Buffer
	if err := t.ExecuteTemplate(&sys, "system.tmpl", d); err != nil {
		return "", "", fmt.Errorf("generation: system prompt: %w", err)
	}
	if err := t.ExecuteTemplate(&usr, task+".tmpl", d); err != nil {
		return "", "", fmt.Errorf("generation: %s prompt: %w", task, err)
	}
	return sys.String(), usr.String(), nil
}

// Tokens estimates the tokens of a text the way budgets are kept: a token per 4 bytes of UTF-8, rounded
// up, which over-counts English slightly and most other scripts more, so a budget kept by it holds.
func Tokens(s string) int { return (len(s) + 3) / 4 }

// cut returns s cut to at most n bytes at a character boundary, marked when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
