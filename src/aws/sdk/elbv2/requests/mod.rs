//! The ELBv2 write requests, each built from the model value the deployer hands over by one
//! pure function (no client, no network) that takes its model struct apart without `..`: a field
//! added to the model does not compile until it is sent or named as not part of the call, and
//! the tests read every sent field back from the built SDK input.

mod balancers;
mod listeners;

pub(crate) use balancers::*;
pub(crate) use listeners::*;
