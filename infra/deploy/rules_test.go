package deploy

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// ruleFailures evaluates the template's Rules as CloudFormation does before it makes a change set: the
// AssertDescription of every assertion that fails in a rule whose RuleCondition holds (or that has none).
func ruleFailures(t *testing.T, tpl map[string]any, params map[string]string) []string {
	t.Helper()
	e := cfnEval{t: t, tpl: tpl, params: params}
	rules, _ := at(tpl, "Rules").(map[string]any)
	var failed []string
	for _, name := range slices.Sorted(maps.Keys(rules)) {
		rule := rules[name]
		if c := at(rule, "RuleCondition"); c != nil && !e.eval(c).(bool) {
			continue
		}
		for _, a := range asList(at(rule, "Assertions")) {
			if !e.eval(at(a, "Assert")).(bool) {
				failed = append(failed, str(at(a, "AssertDescription")))
			}
		}
	}
	return failed
}

// A prod stack is refused without session-token verification (JwksUrl, JwtIssuer, JwtAudience) and an
// alarm topic, each named; dev and staging deploy without them.
func TestProdRefusesToDeployWithoutAuthAndAlarms(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	complete := map[string]string{
		"Environment":   "prod",
		"JwksUrl":       "https://accounts.example.com/.well-known/jwks.json",
		"JwtIssuer":     "https://accounts.example.com",
		"JwtAudience":   "css",
		"AlarmTopicArn": "arn:aws:sns:us-east-1:123456789012:css-alarms",
	}
	if got := ruleFailures(t, tpl, complete); len(got) != 0 {
		t.Errorf("prod with every parameter is refused: %q", got)
	}
	for _, missing := range []string{"JwksUrl", "JwtIssuer", "JwtAudience", "AlarmTopicArn"} {
		params := maps.Clone(complete)
		params[missing] = ""
		got := ruleFailures(t, tpl, params)
		if len(got) != 1 || !strings.Contains(got[0], "prod needs "+missing) {
			t.Errorf("prod without %s: refused with %q, want one refusal naming it", missing, got)
		}
	}
	if got := ruleFailures(t, tpl, map[string]string{"Environment": "prod"}); len(got) != 4 {
		t.Errorf("prod with the defaults: refused with %q, want the four parameters named", got)
	}
	for _, env := range []string{"dev", "staging"} {
		if got := ruleFailures(t, tpl, map[string]string{"Environment": env}); len(got) != 0 {
			t.Errorf("%s with the defaults is refused: %q", env, got)
		}
	}
}
