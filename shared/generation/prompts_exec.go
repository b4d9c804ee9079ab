package generation

import (
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"
)

// The prompts are executed with text/template from the embedded .tmpl files, parsed once per process.

//go:embed prompts/*.tmpl
var promptFiles embed.FS

var promptFuncs = template.FuncMap{
	"join":         strings.Join,
	"patternChars": func() int { return MaxPatternChars },
	"duration":     func(secs int) string { return fmt.Sprintf("%d:%02d", secs/60, secs%60) },
}

var prompts = sync.OnceValues(func() (*template.Template, error) {
	return template.New("").Option("missingkey=zero").Funcs(promptFuncs).ParseFS(promptFiles, "prompts/*.tmpl")
})

// execPrompt writes the template name for d.
func execPrompt(w *strings.Builder, name string, d promptData) error {
	t, err := prompts()
	if err != nil {
		return err
	}
	return t.ExecuteTemplate(w, name, d)
}
