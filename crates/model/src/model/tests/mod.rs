//! Golden tests of the model: upstream's Gateway builder cases (`golden_gateway`, inputs in
//! `../golden_gateway/`) and Ingress cases (`golden_ingress`, in `../golden_ingress/`), each
//! compared with the stack upstream expects.

mod golden_gateway;
mod golden_ingress;
