package generation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestEveryTaskHasACompilableSchema(t *testing.T) {
	for _, task := range Tasks {
		raw, err := Schema(task)
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(task+".json", doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile(task + ".json"); err != nil {
			t.Errorf("%s: %v", task, err)
		}
	}
	if _, err := Schema("nope"); err == nil {
		t.Error("an unknown task has a schema")
	}
}

// What code computes is not asked of the model.
func TestDraftsLeaveComputedFieldsToCode(t *testing.T) {
	for task, absent := range map[string][]string{
		TaskLongScript: {`"grade"`, `"wordCount"`, `"estimatedDuration"`},
		TaskThumbnail:  {`"imageUrl"`, `"grade"`},
		TaskClips:      {`"duration"`},
		TaskReoptimize: {`"imageUrl"`, `"dimensions"`},
		TaskNicheScore: {`"overallScore"`, `"letterGrade"`},
	} {
		raw, _ := Schema(task)
		for _, a := range absent {
			if strings.Contains(string(raw), a) {
				t.Errorf("%s asks the model for %s", task, a)
			}
		}
	}
	raw, _ := Schema(TaskLongScript)
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(raw, &s)
	if len(s.Required) != 1 || s.Required[0] != "script" {
		t.Errorf("long_script requires %v, want [script]", s.Required)
	}
}
