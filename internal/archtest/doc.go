// Package archtest holds the test that enforces gpzoo's package import DAG (see ARCHITECTURE.md).
package archtest
