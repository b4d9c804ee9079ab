package contract

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
)

func mustLoad(t *testing.T) *Contract {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDecodeFillsTheTypedInput: one validation gives the operation's Go input, with defaults applied and
// UUIDs lower-cased, for parameters and body alike.
func TestDecodeFillsTheTypedInput(t *testing.T) {
	c := mustLoad(t)
	var in UpsertScheduleSlotInput
	err := c.Operation("upsertScheduleSlot").Decode(RawRequest{Body: []byte(
		`{"dayOfWeek":2,"slotType":"publish","contentType":"Long","publishTime":null,"assignedVideoId":"0195A5A1-7C4B-7C8E-9E1F-3A2B1C0D9E8F","weekStart":"2026-11-23"}`)}, &in)
	if err != nil {
		t.Fatal(err)
	}
	b := in.Body
	if b.DayOfWeek != 2 || b.SlotType != SlotTypePublish || b.ContentType == nil || *b.ContentType != ContentTypeLong ||
		!b.PublishTime.Set || b.PublishTime.Value != nil || b.WeekStart == nil || *b.WeekStart != "2026-11-23" {
		t.Errorf("decoded %+v", b)
	}
	if !b.AssignedVideoID.Set || *b.AssignedVideoID.Value != "0195a5a1-7c4b-7c8e-9e1f-3a2b1c0d9e8f" {
		t.Errorf("assignedVideoId %+v, want the id lower-cased", b.AssignedVideoID)
	}

	var list ListHistoryInput
	if err := c.Operation("listHistory").Decode(RawRequest{Query: url.Values{"search": {"pasta"}}}, &list); err != nil {
		t.Fatal(err)
	}
	if list.Tool != HistoryToolAll || list.Limit != 20 || list.Offset != 0 || list.Search == nil || *list.Search != "pasta" {
		t.Errorf("listHistory input %+v, want defaults tool=all limit=20 offset=0", list)
	}

	var titles GenerateTitlesInput
	if err := c.Operation("generateTitles").Decode(RawRequest{Body: []byte(`{"title":"t","type":"how-to"}`)}, &titles); err != nil {
		t.Fatal(err)
	}
	if titles.Body.VideoType == nil || *titles.Body.VideoType != TitlesRequestVideoTypeBoth || titles.Body.Count != nil || titles.Body.Type != TitlesRequestTypeHowTo {
		t.Errorf("titles input %+v", titles.Body)
	}
}

func TestDecodeRefusesBadInput(t *testing.T) {
	c := mustLoad(t)
	var in CreateNoteInput
	err := c.Operation("createNote").Decode(RawRequest{Body: []byte(`{"category":"diary","content":"x"}`)}, &in)
	if e, ok := apperr.As(err); !ok || e.Code != apperr.Validation || e.Field != "category" {
		t.Fatalf("error %v, want a VALIDATION_ERROR naming category", err)
	}
	var wrong ListNotesInput
	if err := c.Operation("createNote").Decode(RawRequest{Body: []byte(`{"category":"general","content":"x"}`)}, &wrong); err == nil {
		t.Fatal("a listNotes input was filled from a createNote request")
	}
}

// TestValidateOutsideHTTP: a value built in Go is checked by the same rules, with the same error, as the
// same value sent as JSON; defaults apply to it too.
func TestValidateOutsideHTTP(t *testing.T) {
	c := mustLoad(t)
	cases := []struct {
		name string
		body any
		in   interface{ Validate() error }
	}{
		{"note content too long", map[string]any{"category": "general", "content": string(make([]byte, 2001))},
			&NoteCreate{Category: NoteCategoryGeneral, Content: string(make([]byte, 2001))}},
		{"unknown category", map[string]any{"category": "diary", "content": "x"}, &NoteCreate{Category: "diary", Content: "x"}},
		{"series name empty", map[string]any{"name": "", "description": "", "scriptFormula": ""}, &SeriesCreate{}},
		{"slot day out of range", map[string]any{"dayOfWeek": 7, "slotType": "publish"}, &ScheduleSlotInput{DayOfWeek: 7, SlotType: SlotTypePublish}},
		{"bad publish time", map[string]any{"dayOfWeek": 1, "slotType": "publish", "publishTime": "25:00"},
			&ScheduleSlotInput{DayOfWeek: 1, SlotType: SlotTypePublish, PublishTime: Some("25:00")}},
		{"keywords not 4", map[string]any{"keywords": []string{"a"}}, &NicheProfile{Keywords: []string{"a"}}},
		{"commit with neither idea nor fields", map[string]any{}, &CommitVideoRequest{}},
		{"patch with nothing", map[string]any{}, &SeriesUpdate{}},
	}
	ops := map[string]string{"note content too long": "createNote", "unknown category": "createNote", "series name empty": "createSeries",
		"slot day out of range": "upsertScheduleSlot", "bad publish time": "upsertScheduleSlot", "keywords not 4": "putNicheProfile",
		"commit with neither idea nor fields": "commitVideo", "patch with nothing": "updateSeries"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.body)
			_, restErr := c.Operation(ops[tc.name]).ValidateBody(raw)
			goErr := tc.in.Validate()
			if restErr == nil || goErr == nil {
				t.Fatalf("REST error %v, Go error %v: want both", restErr, goErr)
			}
			if restErr.Error() != goErr.Error() {
				t.Errorf("REST says %q, Go says %q", restErr, goErr)
			}
		})
	}
	ok := &SeriesCreate{Name: "n"}
	if err := ok.Validate(); err != nil || ok.IsActive == nil || !*ok.IsActive {
		t.Errorf("valid series: %v, isActive %v (default true)", err, ok.IsActive)
	}
	id := &VideoStatusUpdate{VideoID: "0195A5A1-7C4B-7C8E-9E1F-3A2B1C0D9E8F", Status: VideoStatusFilmed}
	if err := id.Validate(); err != nil || id.VideoID != "0195a5a1-7c4b-7c8e-9e1f-3a2b1c0d9e8f" {
		t.Errorf("status update: %v, id %q (want lower case)", err, id.VideoID)
	}
}

// TestValidateJSONAgainstResponseSchemas: every component schema of the document, response side included,
// compiles, and a value is checked against it with the request rules' errors (the generation pipeline
// checks a model's output this way).
func TestValidateJSONAgainstResponseSchemas(t *testing.T) {
	var all struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	}
	if err := json.Unmarshal([]byte(schemasJSON), &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Schemas) < 80 {
		t.Fatalf("schemas.json holds %d schemas", len(all.Schemas))
	}
	for name := range all.Schemas {
		vs, err := loadValueSchemas()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := vs.compiler.ref("#/components/schemas/"+name, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	good := `{"titles":[{"title":"5 vegan lunches","grade":"A-","score":91,"videoType":"Long",
		"dimensions":{"nicheRelevance":9,"researchAlignment":8}}],"generated":12,"filtered":3}`
	if _, err := ValidateJSON("TitlesResult", []byte(good)); err != nil {
		t.Errorf("a valid TitlesResult: %v", err)
	}
	for raw, field := range map[string]string{
		`{"titles":[{"title":"t","grade":"A*"}],"generated":1,"filtered":0}`:                                "titles[0].grade",
		`{"titles":[{"title":"t","grade":"A","score":101}],"generated":1,"filtered":0}`:                     "titles[0].score",
		`{"titles":[{"title":"t","grade":"A","dimensions":{"hookStrength":0}}],"generated":1,"filtered":0}`: "titles[0].dimensions.hookStrength",
		`{"titles":[],"generated":1}`:                            "filtered",
		`{"titles":[],"generated":1,"generated":2,"filtered":0}`: "generated",
		`{"titles":[] `: "body",
	} {
		_, err := ValidateJSON("TitlesResult", []byte(raw))
		if e, ok := apperr.As(err); !ok || e.Code != apperr.Validation || e.Field != field {
			t.Errorf("%s: %v, want a VALIDATION_ERROR naming %s", raw, err, field)
		}
	}
	if _, err := ValidateJSON("NoSuchSchema", []byte(`{}`)); err == nil || apperr.CodeOf(err) == apperr.Validation {
		t.Errorf("an unknown schema: %v, want a server-side error", err)
	}
}
