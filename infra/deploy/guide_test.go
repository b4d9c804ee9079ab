package deploy

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestDeployGuideNamesEveryParameter: the deploy guide (README.md here) explains every parameter of the
// template and names only outputs the template has, so a new parameter cannot reach `sam deploy --guided`
// unexplained.
func TestDeployGuideNamesEveryParameter(t *testing.T) {
	guide, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	tpl := readTemplate(t, templatePath)
	params, _ := at(tpl, "Parameters").(map[string]any)
	if len(params) < 20 {
		t.Fatalf("the template has %d parameters; the scan is broken", len(params))
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if !strings.Contains(string(guide), "`"+name+"`") {
			t.Errorf("the deploy guide does not name the parameter `%s`", name)
		}
	}
	for _, output := range []string{"ApiUrl", "McpUrl", "TableName", "ImagesBucketName"} {
		if at(tpl, "Outputs", output) == nil {
			t.Errorf("the deploy guide names the output %s, which the template lacks", output)
		}
	}
	for _, retained := range []string{"Table", "ImagesBucket", "WebhookSecretsKey"} {
		if str(at(tpl, "Resources", retained, "DeletionPolicy")) != "Retain" {
			t.Errorf("the teardown says %s is retained; the template does not retain it", retained)
		}
	}
}
