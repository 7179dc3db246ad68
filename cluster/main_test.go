package cluster

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// envWorker makes the test binary a worker process: TestMain runs Work with the flags of WorkerFlags and
// exits, so the tests start real worker processes (Command(os.Args[0])) on loopback.
const envWorker = "GPZOO_DIST_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) == "" {
		os.Exit(m.Run())
	}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	get := WorkerFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	a, err := get()
	if err == nil {
		err = runWorkerProcess(a)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "test worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// envProducts makes a worker process (envWorker) a products worker of the exact GP (WorkProducts).
const envProducts = "GPZOO_DIST_TEST_PRODUCTS"

func runWorkerProcess(a WorkerArgs) error {
	nc, err := Connect(a.URL, "test-worker", a.Security)
	if err != nil {
		return err
	}
	defer nc.Close()
	if os.Getenv(envProducts) != "" {
		return WorkProducts(ProductWorkerConfig{Conn: nc, Run: a.Run, Index: a.Shard, Of: a.Of})
	}
	_, err = Work(WorkerConfig{Conn: nc, Run: a.Run, Shard: a.Shard, Of: a.Of, Delay: a.Delay})
	return err
}

// processes is the Spawner of worker processes running this test binary.
func processes(t testing.TB) Spawner {
	t.Setenv(envWorker, "1")
	return Command(os.Args[0])
}
