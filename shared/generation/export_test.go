package generation

// TaskComponent names the contract component whose Go type a task's answer decodes into ("" for the
// tasks whose answer is not part of a response).
func TaskComponent(task string) string { return derived[task].component }

// InjectionCorpus reads testdata/injection_corpus.txt (testdataStrings), for the external tests.
var InjectionCorpus = testdataStrings
