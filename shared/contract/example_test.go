package contract_test

import (
	"fmt"
	"net/url"

	"github.com/creatorstrategy/css/shared/contract"
)

// A request is validated and decoded without HTTP: the same check a REST handler, an MCP tool and a queue
// worker make, filling the operation's generated input type.
func ExampleOperation_Decode() {
	c, err := contract.Load()
	if err != nil {
		panic(err)
	}
	createNote := c.Operation("createNote")

	var in contract.CreateNoteInput
	err = createNote.Decode(contract.RawRequest{Body: []byte(`{"category":"insight","content":"Shorts do best on Tuesdays"}`)}, &in)
	fmt.Println(err, in.Body.Category, in.Body.Content)

	// An invalid request answers an error naming the field, as a 400 VALIDATION_ERROR would.
	err = createNote.Decode(contract.RawRequest{Body: []byte(`{"category":"gossip","content":"x"}`)}, &in)
	fmt.Println(err)

	// Query parameters are validated the same way.
	var ideas contract.ListVideoIdeasInput
	err = c.Operation("listVideoIdeas").Decode(contract.RawRequest{Query: url.Values{"contentType": {"Short"}, "limit": {"5"}}}, &ideas)
	fmt.Println(err, *ideas.ContentType, ideas.Limit, ideas.Offset)
	err = c.Operation("listVideoIdeas").Decode(contract.RawRequest{Query: url.Values{"limit": {""}}}, &ideas)
	fmt.Println(err)
	// Output:
	// <nil> insight Shorts do best on Tuesdays
	// VALIDATION_ERROR: category: "gossip" is not one of preference, decision, feedback, insight, style, general
	// <nil> Short 5 0
	// VALIDATION_ERROR: limit: must not be empty
}

// A service holds a body to the same schema with its Validate method.
func ExampleNoteCreate_Validate() {
	note := contract.NoteCreate{Category: contract.NoteCategoryInsight, Content: ""}
	fmt.Println(note.Validate())
	// Output: VALIDATION_ERROR: content: must not be empty
}
