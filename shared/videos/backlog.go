package videos

import "strings"

// MaxBacklog is the most ideas a channel's backlog holds (decision 32).
const MaxBacklog = 200

// NewIdeas returns the candidates that may join a backlog: never a title already taken (in the backlog or
// the pipeline, compared case-insensitively and ignoring surrounding space), nor one given twice, and no
// more than room of them (decision 32), in the order given.
func NewIdeas(candidates []Idea, taken []string, room int) []Idea {
	seen := make(map[string]bool, len(taken)+len(candidates))
	for _, t := range taken {
		seen[titleKey(t)] = true
	}
	var out []Idea
	for _, c := range candidates {
		if len(out) >= room {
			break
		}
		k := titleKey(c.Title)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	return out
}

func titleKey(t string) string { return strings.ToLower(strings.TrimSpace(t)) }
