mod aws;
mod support;
