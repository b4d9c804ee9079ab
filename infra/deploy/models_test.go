package deploy

import (
	"regexp"
	"testing"

	"github.com/creatorstrategy/css/shared/config"
)

// The Bedrock model ids are template parameters whose defaults are config's, and every function reads
// them from the environment config reads.
func TestModelParameters(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	env := at(tpl, "Globals", "Function", "Environment", "Variables")
	for _, tc := range []struct{ param, def, envVar string }{
		{"GenerationModelId", config.DefaultBedrockGenerationModel, "CSS_GENERATION_MODEL"},
		{"GradingModelId", config.DefaultBedrockGradingModel, "CSS_GRADING_MODEL"},
	} {
		p := at(tpl, "Parameters", tc.param)
		if p == nil {
			t.Errorf("no parameter %s", tc.param)
			continue
		}
		if got := str(at(p, "Default")); got != tc.def {
			t.Errorf("%s: default %q, config's is %q", tc.param, got, tc.def)
		}
		if pattern := str(at(p, "AllowedPattern")); !regexp.MustCompile(pattern).MatchString(tc.def) {
			t.Errorf("%s: AllowedPattern %q refuses the default", tc.param, pattern)
		}
		if !isRef(at(env, tc.envVar), tc.param) {
			t.Errorf("Globals.Function.Environment.Variables.%s: want !Ref %s", tc.envVar, tc.param)
		}
	}
}
