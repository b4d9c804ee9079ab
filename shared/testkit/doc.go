// Package testkit holds the tree's layering rules (its test); its sub-packages are the test kit: the
// stand-ins and harnesses that tests and the local stack use, and no Lambda links. See README.md.
package testkit
