"""DreamerV3's world-model KL balancing (nets.RSSM.loss): the dynamics loss trains the prior towards the stopped
posterior, the representation loss the posterior towards the stopped prior, each clipped below by free bits.
Latents are (batch, time, stoch, classes) categoricals with 1% unimix; the prior network is a dict-params stub."""

import jax
import jax.numpy as jnp

f32 = jnp.float32
sg = lambda x: jax.tree_util.tree_map(jax.lax.stop_gradient, x)


class OneHotDist:

  def __init__(self, logits):
    self.logits = logits

  def log_probs(self):
    return jax.nn.log_softmax(self.logits, -1)

  def kl_divergence(self, other):
    # tfd.Independent(OneHotCategorical(logits), 1): summed over the stoch axis.
    probs = jax.nn.softmax(self.logits, -1)
    kl = (probs * (self.log_probs() - other.log_probs())).sum(-1)
    return kl.sum(-1)


def unimix(logits, unimix=0.01):
  probs = jax.nn.softmax(logits, -1)
  uniform = jnp.ones_like(probs) / probs.shape[-1]
  probs = (1 - unimix) * probs + unimix * uniform
  return jnp.log(probs)


def prior_net(params, deter):
  x = jax.nn.silu(deter @ params["img_out"]["w"] + params["img_out"]["b"])
  logits = x @ params["img_logit"]["w"]
  return logits.reshape(deter.shape[:-1] + (3, 4))


def dist(logits):
  return OneHotDist(unimix(logits))


def loss(params, deter, post_logit, free=1.0, dyn_scale=0.5, rep_scale=0.1):
  prior = prior_net(params, deter)
  post = post_logit
  dyn = dist(sg(post)).kl_divergence(dist(prior))
  rep = dist(post).kl_divergence(dist(sg(prior)))
  if free:
    dyn = jnp.maximum(dyn, free)
    rep = jnp.maximum(rep, free)
  losses = {"dyn": dyn, "rep": rep}
  return (dyn_scale * losses["dyn"] + rep_scale * losses["rep"]).mean()


def example():
  k = jax.random.split(jax.random.PRNGKey(8), 5)
  params = {"img_out": {"w": jax.random.normal(k[0], (5, 6)), "b": jax.random.normal(k[1], (6,)) * 0.1},
            "img_logit": {"w": jax.random.normal(k[2], (6, 12)) * 1.5}}
  deter = jax.random.normal(k[3], (2, 3, 5))
  post_logit = jax.random.normal(k[4], (2, 3, 3, 4)) * 2.0
  return params, deter, post_logit, 0.5
