package deploy

import (
	"regexp"
	"testing"

	"github.com/creatorstrategy/css/shared/config"
)

// The images bucket (issue 8): private, encrypted, TLS only, its pictures expiring; the image model and its
// region as parameters whose defaults are the configuration's; the functions told all three.
func TestImagesBucket(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	b := at(tpl, "Resources", "ImagesBucket")
	if str(at(b, "Type")) != "AWS::S3::Bucket" {
		t.Fatal("no AWS::S3::Bucket named ImagesBucket")
	}
	p := at(b, "Properties")
	pab := at(p, "PublicAccessBlockConfiguration")
	rule := at(p, "LifecycleConfiguration", "Rules", "0")
	checks := []struct {
		what string
		ok   bool
	}{
		{"encryption at rest (SSE-S3)", str(at(p, "BucketEncryption", "ServerSideEncryptionConfiguration", "0",
			"ServerSideEncryptionByDefault", "SSEAlgorithm")) == "AES256"},
		{"every public access blocked", str(at(pab, "BlockPublicAcls")) == "true" && str(at(pab, "BlockPublicPolicy")) == "true" &&
			str(at(pab, "IgnorePublicAcls")) == "true" && str(at(pab, "RestrictPublicBuckets")) == "true"},
		{"ACLs disabled", str(at(p, "OwnershipControls", "Rules", "0", "ObjectOwnership")) == "BucketOwnerEnforced"},
		{"objects expire after ImageRetentionDays", str(at(rule, "Status")) == "Enabled" &&
			isRef(at(rule, "ExpirationInDays"), "ImageRetentionDays") && at(rule, "Prefix") == nil && at(rule, "Filter") == nil},
		{"retention defaults to 90 days", str(at(tpl, "Parameters", "ImageRetentionDays", "Default")) == "90"},
		{"no website, no public ACL", at(p, "WebsiteConfiguration") == nil && at(p, "AccessControl") == nil},
		{"kept on stack deletion", str(at(b, "DeletionPolicy")) == "Retain" && str(at(b, "UpdateReplacePolicy")) == "Retain"},
		{"output ImagesBucketName", isRef(at(tpl, "Outputs", "ImagesBucketName", "Value"), "ImagesBucket")},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("ImagesBucket: want %s", c.what)
		}
	}

	// The bucket policy denies every request that is not over TLS, on the bucket and its objects, and
	// allows nothing.
	var tlsOnly bool
	for id, r := range at(tpl, "Resources").(map[string]any) {
		if str(at(r, "Type")) != "AWS::S3::BucketPolicy" || !isRef(at(r, "Properties", "Bucket"), "ImagesBucket") {
			continue
		}
		for _, st := range asList(at(r, "Properties", "PolicyDocument", "Statement")) {
			if str(at(st, "Effect")) == "Allow" {
				t.Errorf("%s: allows %v", id, at(st, "Action"))
			}
			res := asList(at(st, "Resource"))
			if str(at(st, "Effect")) == "Deny" && str(at(st, "Principal")) == "*" && str(at(st, "Action")) == "s3:*" &&
				str(at(st, "Condition", "Bool", "aws:SecureTransport")) == "false" && len(res) == 2 &&
				isGetAtt(res[0], "ImagesBucket", "Arn") && str(at(res[1], "Fn::Sub")) == "${ImagesBucket.Arn}/*" {
				tlsOnly = true
			}
		}
	}
	if !tlsOnly {
		t.Error("no bucket policy of ImagesBucket denies requests without TLS on the bucket and its objects")
	}

	params := at(tpl, "Parameters")
	for _, tc := range []struct{ param, def string }{
		{"ImageModelId", config.DefaultImageModel},
		{"ImageModelRegion", config.DefaultImageRegion},
	} {
		p := at(params, tc.param)
		if got := str(at(p, "Default")); got != tc.def {
			t.Errorf("%s: default %q, want the configuration's %q", tc.param, got, tc.def)
		}
		if re, err := regexp.Compile(str(at(p, "AllowedPattern"))); err != nil || !re.MatchString(tc.def) {
			t.Errorf("%s: AllowedPattern %q refuses its default (%v)", tc.param, str(at(p, "AllowedPattern")), err)
		}
	}
	env := at(tpl, "Globals", "Function", "Environment", "Variables")
	for name, ref := range map[string]string{"CSS_IMAGE_MODEL": "ImageModelId", "CSS_IMAGE_REGION": "ImageModelRegion",
		"CSS_IMAGES_BUCKET": "ImagesBucket"} {
		if !isRef(at(env, name), ref) {
			t.Errorf("Globals.Function.Environment: want %s: !Ref %s", name, ref)
		}
	}
}
