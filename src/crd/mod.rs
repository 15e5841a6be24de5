//! Custom resource types: TargetGroupBinding and IngressClassParams (kube derive).
