package generation

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
)

// minMaterialTokens is the least a call's own material (the transcript it reads, the texts it grades) is
// left when the channel's profile, the series and the request take the rest of the budget: under it, the
// request is refused rather than run on a stub (issue 19 item 5).
const minMaterialTokens = 1000

// materialFraming is what the prompt adds around the material (its heading, the sentence that mentions
// it), kept aside when the material is cut to what is left.
const materialFraming = 64

// promptLimit is what bounds one prompt: the configured budget, or, when the model's context window is
// set and leaves less after the answer, what the window leaves (Window names it in errors).
type promptLimit struct {
	Tokens int
	Window int // the model's context window in tokens when it is what binds; 0 otherwise
}

// limitOf is the prompt limit of a budget (DefaultPromptBudget when 0) within a model's context window
// (0: not set): the window less the answer's maxOutputTokens, when that is less than the budget.
func limitOf(budget, window int) promptLimit {
	l := promptLimit{Tokens: cmp.Or(budget, DefaultPromptBudget)}
	if window > 0 && window-maxOutputTokens < l.Tokens {
		l = promptLimit{Tokens: window - maxOutputTokens, Window: window}
	}
	return l
}

// PromptBudget is the prompt budget (estimated tokens) within a model's context window of window tokens
// (0: not set); it may be 0 or less when the window cannot hold an answer.
func PromptBudget(budget, window int) int { return limitOf(budget, window).Tokens }

func (l promptLimit) String() string {
	if l.Window > 0 {
		return fmt.Sprintf("the %d the model's context window of %d tokens leaves after the answer's %d "+
			"(CSS_MODEL_CONTEXT_TOKENS; a larger window is set on the model server: llama-cpp-python --n_ctx, llama.cpp -c)",
			max(l.Tokens, 0), l.Window, maxOutputTokens)
	}
	return fmt.Sprintf("the budget of %d", l.Tokens)
}

// overBudget is the error of a prompt whose fixed parts (the instructions, the request, the niche profile,
// the series) do not fit the limit: VALIDATION_ERROR naming the field whose shortening helps most, and the
// limit (the model's context window, when that is what binds). A retry cannot change it, so the worker
// fails such a job at once (no queue retry), and Submit refuses it before queueing.
func overBudget(tool string, b *Brief, need int, limit promptLimit) error {
	field, where, size := largestPart(b)
	if field == "" {
		return apperr.Invalid("body", "the %s prompt needs %d estimated tokens, over %s", tool, need, limit)
	}
	return apperr.Invalid(field, "%s (%d characters) makes the %s prompt need %d estimated tokens, over %s; shorten it",
		where, size, tool, need, limit)
}

// largestPart names the largest text of a brief's fixed parts: a request field, a niche profile field or
// a series field, with a phrase saying where it is and its length in characters.
func largestPart(b *Brief) (field, where string, size int) {
	type part struct {
		field, where string
		text         string
	}
	var parts []part
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	for k, v := range in {
		if s, ok := v.(string); ok {
			parts = append(parts, part{k, "the request's " + k, s})
		}
	}
	var prof map[string]any
	if raw, err := json.Marshal(b.Profile); err == nil {
		_ = json.Unmarshal(raw, &prof)
	}
	for k, v := range prof {
		switch x := v.(type) {
		case string:
			parts = append(parts, part{k, "the niche profile's " + k, x})
		case []any:
			s := ""
			for _, e := range x {
				s += fmt.Sprint(e) + ", "
			}
			parts = append(parts, part{k, "the niche profile's " + k, s})
		}
	}
	if se := b.Series; se != nil {
		parts = append(parts, part{"seriesId", "the series' scriptFormula", se.ScriptFormula},
			part{"seriesId", "the series' description", se.Description}, part{"seriesId", "the series' name", se.Name})
	}
	// Only what the prompt shows counts.
	sys, usr, _ := Render(b)
	parts = slices.DeleteFunc(parts, func(p part) bool {
		first, _, _ := strings.Cut(p.text, ", ")
		return first == "" || !strings.Contains(sys, first) && !strings.Contains(usr, first)
	})
	if len(parts) == 0 {
		return "", "", 0
	}
	p := slices.MaxFunc(parts, func(x, y part) int {
		return cmp.Or(cmp.Compare(len(x.text), len(y.text)), cmp.Compare(y.field, x.field))
	})
	if p.text == "" {
		return "", "", 0
	}
	return p.field, p.where, len([]rune(p.text))
}

// fitMaterial cuts the call's own material to what the budget leaves after its fixed parts: a transcript
// to its share (and to what is left), each text to grade to an equal part of what is left. It returns
// the tokens the fixed parts need, or overBudget when they leave less than minMaterialTokens to a call
// that has material, or do not fit at all.
func fitMaterial(tool string, b *Brief, limit promptLimit) (int, error) {
	budget := limit.Tokens
	fixedBrief := *b
	fixedBrief.Transcript, fixedBrief.Items = "", make([]string, len(b.Items))
	fixed, err := cost(&fixedBrief)
	if err != nil {
		return 0, err
	}
	hasMaterial := b.Transcript != "" || len(b.Items) > 0
	room := budget - fixed - materialFraming
	if room < 0 || (hasMaterial && room < minMaterialTokens) {
		return fixed, overBudget(tool, b, fixed+minMaterialTokens*boolInt(hasMaterial), limit)
	}
	if b.Transcript != "" {
		b.Transcript = cutEncoded(b.Transcript, min(int(float64(budget)*transcriptShare), room))
	}
	if n := len(b.Items); n > 0 {
		each := room / n
		var items []string
		for _, it := range b.Items {
			items = append(items, cutEncoded(it, each))
		}
		b.Items = items
	}
	return fixed, nil
}

// cutEncoded cuts text until it costs at most tokens as the prompt shows it: inside a data block, JSON-
// encoded, where a newline or an escaped character takes more bytes than in the text itself.
func cutEncoded(text string, tokens int) string {
	for text != "" {
		over := Tokens(encodeData(text)) - tokens
		if over <= 0 {
			break
		}
		text = cut(text, max(len(text)-over*4, 0))
	}
	return text
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CheckBudget reports whether the fixed parts of a tool's main prompt (its instructions, the request, the
// channel's niche profile, the series) fit the prompt budget with room for its material: nil, or
// VALIDATION_ERROR naming the field to shorten. Submit calls it before queueing a job.
func (a *Assembler) CheckBudget(ctx context.Context, channelID, tool, seriesID string, base Brief) error {
	b, err := a.fixedParts(ctx, channelID, seriesID, base)
	if err != nil {
		return err
	}
	_, err = fitMaterial(tool, b, limitOf(a.Budget, a.Window))
	return err
}
