//! Tests of the Service (NLB) model by concept: `feature` (settings upstream's stack table does
//! not cover), `lb` (the load balancer side) and `golden` (upstream's expected stacks); the
//! helpers they share are `test_support`.

mod feature;
mod golden;
mod lb;
