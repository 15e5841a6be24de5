//! Desired state: Ingress groups → an ALB stack, as a pure function of Kubernetes objects.
