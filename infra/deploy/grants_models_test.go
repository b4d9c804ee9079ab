package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/testkit/bedrocktest"
	"github.com/creatorstrategy/css/shared/testkit/offline/textmodel"
)

// The workers' role credentials, as Lambda puts them in their environment; the loopback Bedrock checks
// every call is signed with them.
var workerCreds = aws.Credentials{AccessKeyID: "AKIDGRANTSWORKER", SecretAccessKey: "grants-worker-secret", SessionToken: "grants-worker-session"}

// startModels is the loopback Bedrock Runtime the workers' real binaries call in production mode (no
// Lambda links the offline model). Its answers are the offline model's, written from a brief read back out
// of the prompt's data blocks: a network model reads only the prompt, so that is all this one gets. The
// grants test needs the pipeline's table calls, not good writing; the runs' outcomes are checked where it
// matters (the titles run succeeds, the research runs succeed).
func startModels(t *testing.T) *models {
	t.Helper()
	m := &models{}
	m.Server = bedrocktest.Start(t, workerCreds, m.answer, 64, 36)
	return m
}

// models is the loopback Bedrock, and the prompts the offline model could not answer from.
type models struct {
	*bedrocktest.Server
	mu         sync.Mutex
	unanswered []string
}

func (m *models) answer(c bedrocktest.Call) bedrocktest.Answer {
	a, err := answerFromPrompt(c)
	if err != nil {
		m.mu.Lock()
		m.unanswered = append(m.unanswered, c.Tool()+": "+err.Error())
		m.mu.Unlock()
		return bedrocktest.Answer{Input: `{}`, InputTokens: 1, OutputTokens: 1}
	}
	return a
}

// check holds a worker's model calls to what the cloud allows it: Converse on a model the template grants
// the function (granted: its bedrock:InvokeModel resources, bedrockResources), signed for the stack's
// region; no picture (the image tools have no bucket here and fail before drawing); and every prompt
// carried what the offline model writes from.
func (m *models) check(t *testing.T, function string, granted []string) {
	t.Helper()
	converse := 0
	for _, c := range m.Calls() {
		if c.Operation != "converse" {
			t.Errorf("%s: Bedrock %s of %s: the image tools have no bucket here and should fail before drawing", function, c.Operation, c.ModelID)
			continue
		}
		converse++
		allowed := slices.ContainsFunc(granted, func(arn string) bool {
			return strings.HasSuffix(arn, ":inference-profile/"+c.ModelID) || strings.HasSuffix(arn, ":foundation-model/"+c.ModelID)
		})
		if !allowed || c.Region != "us-east-1" {
			t.Errorf("%s: Converse (%s) on %s in %s, which template.yaml does not grant it (%v)", function, c.Tool(), c.ModelID, c.Region, granted)
		}
	}
	if converse == 0 {
		t.Errorf("%s never called the model", function)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, u := range m.unanswered {
		t.Errorf("%s: a prompt the offline model could not answer from: %s", function, u)
	}
}

var (
	dataBlock    = regexp.MustCompile(`<data-[0-9a-f]+ name="([^"]+)">\n(.*)\n</data-[0-9a-f]+>`)
	ideasCount   = regexp.MustCompile(`Write (\d+) video ideas`)
	ideasType    = regexp.MustCompile(`every one a (Long|Short) video`)
	titlesType   = regexp.MustCompile(`Write \d+ (Long|Short)-form video titles`)
	gradedTool   = regexp.MustCompile(`Grade the (\S+) in data block`)
	inputBlocks  = []string{"title", "type", "topic", "context"}
	offlineModel = textmodel.New()
)

func answerFromPrompt(c bedrocktest.Call) (bedrocktest.Answer, error) {
	user := firstUserText(c.Body)
	b := &generation.Brief{Task: c.Tool(), Language: "english"}
	blocks := map[string]json.RawMessage{}
	for _, m := range dataBlock.FindAllStringSubmatch(user, -1) {
		blocks[m[1]] = json.RawMessage(m[2])
	}
	in := map[string]json.RawMessage{}
	for _, k := range inputBlocks {
		if v, ok := blocks[k]; ok {
			in[k] = v
		}
	}
	b.Input, _ = json.Marshal(in)
	str := func(name string) string { var s string; _ = json.Unmarshal(blocks[name], &s); return s }
	_ = json.Unmarshal(blocks["profile"], &b.Profile)
	_ = json.Unmarshal(blocks["notes"], &b.Notes)
	_ = json.Unmarshal(blocks["series"], &b.Series)
	_ = json.Unmarshal(blocks["own_results"], &b.OwnResults)
	_ = json.Unmarshal(blocks["recent_outputs"], &b.Recent)
	_ = json.Unmarshal(blocks["taken_titles"], &b.Taken)
	b.Transcript, b.Patterns, b.Feedback, b.SpecificItem = str("transcript"), str("research_patterns"), str("feedback"), str("item")
	var items []struct{ Text string }
	_ = json.Unmarshal(blocks["titles"], &items)
	for _, it := range items {
		b.Items = append(b.Items, it.Text)
	}
	if s := str("content"); s != "" {
		b.Items = []string{s}
	}
	if m := gradedTool.FindStringSubmatch(user); m != nil {
		b.GradedTool = m[1]
	}
	var outliers []struct {
		Title       string
		Views       int64
		Score       float64 `json:"timesChannelMedian"`
		ContentType string
	}
	_ = json.Unmarshal(blocks["outlier_videos"], &outliers)
	for _, o := range outliers {
		b.Outliers = append(b.Outliers, generation.Outlier{Title: o.Title, Views: o.Views, Score: o.Score, ContentType: o.ContentType})
	}
	var videos []struct {
		Title, ContentType, Formula, Description string
		Views                                    int64
		Score                                    float64 `json:"timesChannelMedian"`
		Channel                                  string
		Tags                                     []string
	}
	_ = json.Unmarshal(blocks["videos"], &videos)
	for _, v := range videos {
		b.Videos = append(b.Videos, generation.ResearchVideo{Title: v.Title, Views: v.Views, Score: v.Score, ContentType: v.ContentType,
			Formula: v.Formula, ChannelTitle: v.Channel, Description: v.Description, Tags: v.Tags})
	}
	if m := ideasCount.FindStringSubmatch(user); m != nil {
		b.Count, _ = strconv.Atoi(m[1])
	}
	if m := ideasType.FindStringSubmatch(user); m != nil {
		b.ContentType = m[1]
	}
	if m := titlesType.FindStringSubmatch(user); m != nil {
		b.VideoType = m[1]
	}
	if raw, ok := blocks["earlier_output"]; ok {
		// A refinement asks for the original's shape: the tool's schema says which task wrote it.
		b.Original = raw
		schema, _ := json.Marshal(toolSchema(c.Body))
		for _, task := range generation.Tasks {
			if s, err := generation.Schema(task); err == nil && jsonEqual(s, schema) {
				b.OriginalTask = task
			}
		}
	}
	res, err := offlineModel.Generate(context.Background(), ai.Request{Task: b.Task, Brief: b})
	if err != nil {
		return bedrocktest.Answer{}, err
	}
	return bedrocktest.Answer{Input: string(res.JSON), InputTokens: res.InputTokens, OutputTokens: res.OutputTokens}, nil
}

// firstUserText is the text of a Converse request's first user turn (a repair appends turns after it).
func firstUserText(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] != "user" {
			continue
		}
		content, _ := msg["content"].([]any)
		var buf bytes.Buffer
		for _, c := range content {
			block, _ := c.(map[string]any)
			if s, ok := block["text"].(string); ok {
				buf.WriteString(s)
			}
		}
		return buf.String()
	}
	return ""
}

// toolSchema is the input schema of the tool a Converse request forces.
func toolSchema(body map[string]any) any {
	cfg, _ := body["toolConfig"].(map[string]any)
	tools, _ := cfg["tools"].([]any)
	for _, t := range tools {
		tool, _ := t.(map[string]any)
		spec, _ := tool["toolSpec"].(map[string]any)
		schema, _ := spec["inputSchema"].(map[string]any)
		return schema["json"]
	}
	return nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
