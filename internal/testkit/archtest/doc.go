// Package archtest holds the tests that enforce gpzoo's package import DAG (see ARCHITECTURE.md) and its one
// prediction contract (no type switch over model types where models are used: TestNoModelTypeSwitch).
package archtest
