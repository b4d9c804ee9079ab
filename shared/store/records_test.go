package store

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/videos"
)

// memTable is a minimal table for the format tests, which read what they plant (the adapters import
// store, so an internal test cannot use them).
type memTable struct {
	Table
	items map[Key]Item
}

func (m *memTable) Get(_ context.Context, k Key) (Item, error) {
	if it, ok := m.items[k]; ok {
		return it, nil
	}
	return Item{}, ErrNotFound
}

func (m *memTable) Query(_ context.Context, q Query) (Page, error) {
	var p Page
	for k, it := range m.items {
		if k.PK == q.PK && len(k.SK) >= len(q.Prefix) && k.SK[:len(q.Prefix)] == q.Prefix {
			p.Items = append(p.Items, it)
		}
	}
	return p, nil
}

var at = time.Date(2026, 11, 20, 9, 30, 0, 123e6, time.UTC)

func sampleVideo() videos.Video {
	series := "0190a000-0000-7000-8000-000000000001"
	return videos.Video{
		ID: "0190a000-0000-7000-8000-000000000002", Title: `Pasta "al dente" <5 min>`, ContentType: "Long",
		FormulaType: "listicle", Status: videos.Scripted, SeriesID: &series, CreatedAt: at, UpdatedAt: at.Add(time.Hour),
		StatusHistory: []videos.StatusChange{{Status: videos.Planned, At: at}, {Status: videos.Scripted, At: at.Add(time.Hour)}},
	}
}

// TestVideoRecordIsTheAPIShape holds the fast path honest: the current format's JSON of a video is byte for
// byte what the API encodes, so GET /my-videos may serve it as stored.
func TestVideoRecordIsTheAPIShape(t *testing.T) {
	for _, v := range []videos.Video{sampleVideo(), {ID: "x", StatusHistory: []videos.StatusChange{}}} {
		api, _ := json.Marshal(v)
		item, err := encode(videoKey("ch", v.ID), videoRecordOf(v))
		if err != nil {
			t.Fatal(err)
		}
		if item.Data[0] != format2 || !bytes.Equal(item.Data[1:], api) {
			t.Fatalf("stored %q\nAPI    %s", item.Data, api)
		}
		back, err := decodeVideo(item)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(back)
		if !bytes.Equal(again, api) {
			t.Fatalf("round trip: %s; want %s", again, api)
		}
	}
}

// TestOlderFormatsAreConverted: a video of format 1 (bare JSON, as issue 2 stored it, here with its
// members in another order and a member no format knows) is served in the current shape, and a stored
// format newer than the build is an error, not a guess.
func TestOlderFormatsAreConverted(t *testing.T) {
	v := sampleVideo()
	want, _ := json.Marshal(v)
	legacy := []byte(`{"statusHistory":[{"at":"2026-11-20T09:30:00.123Z","status":"planned"},` +
		`{"status":"scripted","at":"2026-11-20T10:30:00.123Z"}],"updatedAt":"2026-11-20T10:30:00.123Z",` +
		`"createdAt":"2026-11-20T09:30:00.123Z","seriesId":"0190a000-0000-7000-8000-000000000001",` +
		`"status":"scripted","formulaType":"listicle","contentType":"Long","title":"Pasta \"al dente\" \u003c5 min\u003e",` +
		`"id":"0190a000-0000-7000-8000-000000000002","retired":true}`)
	current, err := encode(videoKey("ch", v.ID), videoRecordOf(v))
	if err != nil {
		t.Fatal(err)
	}
	other := sampleVideo()
	other.ID = "0190a000-0000-7000-8000-000000000003"
	otherItem, _ := encode(videoKey("ch", other.ID), videoRecordOf(other))
	otherWant, _ := json.Marshal(other)
	tbl := &memTable{items: map[Key]Item{
		videoKey("ch", v.ID):     {Key: videoKey("ch", v.ID), Data: legacy, Version: 3},
		videoKey("ch", other.ID): otherItem,
	}}
	s := New(tbl)
	list, err := s.ListVideos(context.Background(), "ch")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string][]byte{}
	for _, raw := range list {
		var id struct{ ID string }
		_ = json.Unmarshal(raw, &id)
		served[id.ID] = raw
	}
	if !bytes.Equal(served[v.ID], want) {
		t.Errorf("format 1 video served as %s\nwant %s", served[v.ID], want)
	}
	if !bytes.Equal(served[other.ID], otherWant) {
		t.Errorf("format 2 video served as %s\nwant %s", served[other.ID], otherWant)
	}
	got, version, err := s.GetVideo(context.Background(), "ch", v.ID)
	if err != nil || version != 3 || got.Title != v.Title || len(got.StatusHistory) != 2 {
		t.Errorf("GetVideo of format 1 = %+v v%d, %v", got, version, err)
	}
	if current.Data[0] != format2 {
		t.Fatalf("written in format %d", current.Data[0])
	}

	future := append([]byte{maxFormat + 1}, current.Data[1:]...)
	tbl.items[videoKey("ch", v.ID)] = Item{Key: videoKey("ch", v.ID), Data: future}
	if _, err := s.ListVideos(context.Background(), "ch"); err == nil {
		t.Error("a video of an unknown newer format was served")
	}
	if _, _, err := s.GetVideo(context.Background(), "ch", v.ID); err == nil {
		t.Error("a video of an unknown newer format was read")
	}
}

// TestRunRecordIsTheAPIShape: a history page serves stored runs as they are, so the run record's JSON is
// the ToolRun shape; a run of format 1 is converted.
func TestRunRecordIsTheAPIShape(t *testing.T) {
	tokens, model := 7, "m"
	r := generation.ToolRun{ID: "id", ToolName: "titles", Status: generation.Success, Input: json.RawMessage(`{"a":1}`),
		Output: json.RawMessage(`{"b":[2]}`), InputTokens: &tokens, Model: &model, GeneratedAt: at}
	api, _ := json.Marshal(r)
	item, err := encode(runKey("ch", r.ID), runRecord(r))
	if err != nil {
		t.Fatal(err)
	}
	if served, err := storedRun(item); err != nil || !bytes.Equal(served, api) {
		t.Fatalf("format 2 run served as %s, %v; want %s", served, err, api)
	}
	legacy := Item{Key: item.Key, Data: []byte(`{"toolName":"titles","id":"id","status":"success","input":{"a":1},` +
		`"output":{"b":[2]},"inputTokens":7,"outputTokens":null,"model":"m","generatedAt":"2026-11-20T09:30:00.123Z"}`)}
	if served, err := storedRun(legacy); err != nil || !bytes.Equal(served, api) {
		t.Fatalf("format 1 run served as %s, %v; want %s", served, err, api)
	}
}
