/* The shared fuzz cases (tests/fuzz/targets.h). */
#include "targets.h"

#include "../../core/report.h"
#include "../../core/straggler.h"
#include "../../sim/cluster.h"

int fuzz_target_option_values(const struct config *c, struct err *e)
{
    struct straggler_spec s;
    struct failure_spec f;
    TRY(straggler_parse(c->straggler, &s, e));
    return failure_parse(c->fail, &f, e);
}

int fuzz_target_scenario_file(const char *path, struct err *e)
{
    struct config c;
    config_init(&c);
    int rc = config_load_file(&c, path, ~0u, e);
    if (rc == 0) rc = fuzz_target_option_values(&c, e);
    config_release(&c);
    return rc;
}

int fuzz_target_cluster_file(const char *path, struct err *e)
{
    struct cluster c;
    int rc = cluster_load(path, &c, e);
    if (rc == 0) rc = cluster_layout(&c, 9, 0, 0, "hierarchical", e);
    return rc;
}

int fuzz_target_report(const char *bytes, size_t len, struct err *e)
{
    struct report_doc d;
    int rc = report_doc_parse(bytes, len, "fuzz.json", &d, e);
    if (rc == 0) report_doc_release(&d);
    return rc;
}
